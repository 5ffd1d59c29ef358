import { randomInt } from 'node:crypto';
import { inNamespace, runCommand } from './commands.ts';

/** One host of the private network: its own network namespace, with loopback and one address on the bridge. */
export interface NetnsHost {
  name: string;
  namespace: string;
  address: string;
  /** The argv prefix that runs a command on this host (`ip netns exec <namespace>`). */
  exec: string[];
}

export interface PrivateNetwork {
  /** `10.213.N.0/24`, N picked at random so test files running side by side do not collide. */
  subnet: string;
  /** The test process's own address on the bridge: the root namespace is a host too. */
  rootAddress: string;
  hosts: Record<string, NetnsHost>;
  /** Kills what still runs in the namespaces, deletes them (and their veths) and the bridge. */
  close(): Promise<void>;
}

// Names carry the owning process's pid: a run killed before close() is swept by the next one.
const NAMESPACE = /^inferq-(\d+)-/;
const bridgeName = (pid: number) => `iqbr${pid}`;
const namespaceName = (pid: number, host: string) => `inferq-${pid}-${host}`;

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function deleteNamespace(ns: string): Promise<void> {
  const pids = (await runCommand('ip', ['netns', 'pids', ns]).catch(() => '')).split(/\s+/).filter(Boolean);
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await runCommand('ip', ['netns', 'del', ns]).catch(() => {});
}

/** Namespaces and bridges left by test processes that died before cleaning up. */
async function sweepStale(): Promise<void> {
  const names = (await runCommand('ip', ['netns', 'list'])).split('\n').map((l) => l.split(' ')[0]!);
  const dead = new Set<number>();
  for (const ns of names) {
    const pid = Number(NAMESPACE.exec(ns)?.[1]);
    if (pid && !isAlive(pid)) {
      dead.add(pid);
      await deleteNamespace(ns);
    }
  }
  for (const pid of dead) await runCommand('ip', ['link', 'del', bridgeName(pid)]).catch(() => {});
}

async function pickSubnet(): Promise<string> {
  const inUse = await runCommand('ip', ['-4', 'addr']);
  for (;;) {
    const prefix = `10.213.${randomInt(0, 256)}`;
    if (!inUse.includes(`${prefix}.`)) return prefix;
  }
}

/**
 * A bridge in the root namespace and one namespace per host, joined to it by
 * a veth: every connection between hosts goes over a real address, so
 * nftables inside a namespace can cut or thin one link.
 */
export async function createPrivateNetwork(hostNames: string[]): Promise<PrivateNetwork> {
  await sweepStale();
  const pid = process.pid;
  const bridge = bridgeName(pid);
  const prefix = await pickSubnet();
  const hosts: Record<string, NetnsHost> = {};
  const close = async () => {
    await Promise.all(Object.values(hosts).map((h) => deleteNamespace(h.namespace)));
    await runCommand('ip', ['link', 'del', bridge]).catch(() => {});
  };
  try {
    await runCommand('ip', ['link', 'add', bridge, 'type', 'bridge']);
    await runCommand('ip', ['addr', 'add', `${prefix}.1/24`, 'dev', bridge]);
    await runCommand('ip', ['link', 'set', bridge, 'up']);
    for (const [i, name] of hostNames.entries()) {
      const ns = namespaceName(pid, name);
      const host = { name, namespace: ns, address: `${prefix}.${10 + i}`, exec: inNamespace(ns) };
      await runCommand('ip', ['netns', 'add', ns]);
      hosts[name] = host;
      const veth = `iq${pid}v${i}`;
      await runCommand('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      await runCommand('ip', ['link', 'set', veth, 'master', bridge, 'up']);
      await runCommand('ip', ['-n', ns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
      await runCommand('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
      await runCommand('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { subnet: `${prefix}.0/24`, rootAddress: `${prefix}.1`, hosts, close };
}
