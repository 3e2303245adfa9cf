// Copies the non-TypeScript files the compiled code reads at run time (SQL migrations) into dist/.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

function copyTree(srcDir, dstDir, accept) {
  for (const entry of readdirSync(srcDir, { withFileTypes: true })) {
    const from = join(srcDir, entry.name);
    const to = join(dstDir, entry.name);
    if (entry.isDirectory()) copyTree(from, to, accept);
    else if (accept(entry.name)) {
      mkdirSync(dirname(to), { recursive: true });
      cpSync(from, to);
    }
  }
}

copyTree('src', 'dist', (name) => name.endsWith('.sql'));
