// What one instance's state.sqlite holds at a glance (its head), read without creating or changing anything.
// One file is one instance: the head (InstanceHead) is what this and PostgreSQL's instances.ts share; listing
// is PostgreSQL's alone (see InstanceHead in ../shared.ts).
import { type InstanceHead, instanceHeadOf } from '../shared.js';
import { mapSqliteError } from './connection.js';
import { openSqlite } from './driver.js';

/**
 * The head of the instance stored in `path`: how many events its log holds and when the newest was written.
 * The file must exist (nothing is created) and is not migrated. It is opened read-write but never written: a
 * read-only connection to a WAL database leaves `-wal` and `-shm` files behind, while a read-write one that
 * is the last to close removes them, so the folder is left as it was found.
 */
export async function instanceHead(path: string): Promise<InstanceHead> {
  let db: Awaited<ReturnType<typeof openSqlite>>['db'];
  try {
    db = (await openSqlite(path, { mustExist: true, busyTimeoutMs: 1000 })).db;
  } catch (err) {
    throw mapSqliteError(err, path);
  }
  try {
    const row = db.prepare('SELECT position, created_at FROM events ORDER BY position DESC LIMIT 1').get() as
      | { position: number; created_at: number }
      | undefined;
    return instanceHeadOf(row);
  } catch (err) {
    throw mapSqliteError(err, path);
  } finally {
    db.close();
  }
}
