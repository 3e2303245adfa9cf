// Empties dist/ before a pack so the tarball holds only what the current sources compile to
// (tsc never deletes the output of a file that was renamed or removed).
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });
