import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface UserIds {
  uid: number;
  gid: number;
}

/** The uid and gid of a system user, creating it (and its group) when missing. Root only. */
export async function ensureSystemUser(name: string): Promise<UserIds> {
  const found = await lookUpUser(name);
  if (found) return found;
  await run('groupadd', ['--system', name]).catch((err: { code?: number }) => {
    if (err.code !== 9) throw err; // 9: the group exists already
  });
  await run('useradd', ['--system', '--gid', name, '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', name]);
  const created = await lookUpUser(name);
  if (!created) throw new Error(`useradd reported success but user ${name} does not exist`);
  return created;
}

async function lookUpUser(name: string): Promise<UserIds | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return undefined;
  }
}

/** Whether `command args`, run as `ids`, exits 0; false when it cannot even be started (EACCES, ENOENT). */
export function succeedsAs(ids: UserIds, command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { uid: ids.uid, gid: ids.gid, cwd: '/', stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}
