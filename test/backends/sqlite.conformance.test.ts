// The store conformance suite on the embedded SQLite backend (a fresh file per test).
import { join } from 'node:path';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
let n = 0;

runStoreConformance('sqlite', () => openSqliteBackend({ path: join(dir, `store-${++n}.sqlite`) }));
