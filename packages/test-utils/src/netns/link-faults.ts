import { NFT, resolveDebianBinary } from '@inferq/dev-stack';
import { findExecutable, runCommand } from './commands.ts';
import type { NetnsHost } from './network.ts';

/** Faults on the links between hosts, made with nftables inside the hosts' namespaces. */
export interface LinkFaults {
  /** Drops every packet between `a` and `b`, both ways (silently: connections hang as over a dead link). */
  partition(a: NetnsHost, b: NetnsHost): Promise<void>;
  /** Drops `percent` % of the packets between `a` and `b`, at random, each way. */
  loss(a: NetnsHost, b: NetnsHost, percent: number): Promise<void>;
  /** Removes every fault. */
  heal(): Promise<void>;
}

const TABLE = 'inferq_faults';

/** Installs an empty filter table in each host's namespace (nftables is installed first when missing and we are root). */
export async function createLinkFaults(hosts: NetnsHost[]): Promise<LinkFaults> {
  const nft = await resolveDebianBinary(NFT, { findExecutable, log: (line) => console.log(line) });
  const run = (host: NetnsHost, script: string) => runCommand(host.exec[0]!, [...host.exec.slice(1), nft, script]);
  for (const host of hosts)
    await run(
      host,
      `add table inet ${TABLE}
       add chain inet ${TABLE} input { type filter hook input priority 0; policy accept; }
       add chain inet ${TABLE} output { type filter hook output priority 0; policy accept; }`,
    );
  // Rules in `a` alone cover both directions: what it sends to `b` and what it receives from `b`.
  const drop = async (a: NetnsHost, b: NetnsHost, match: string) => {
    await run(a, `add rule inet ${TABLE} output ip daddr ${b.address} ${match} drop\nadd rule inet ${TABLE} input ip saddr ${b.address} ${match} drop`);
  };
  return {
    partition: (a, b) => drop(a, b, ''),
    loss(a, b, percent) {
      if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw new Error(`loss percent must be an integer 0..100, not ${percent}`);
      return drop(a, b, `numgen random mod 100 < ${percent}`);
    },
    async heal() {
      await Promise.all(hosts.map((h) => run(h, `flush chain inet ${TABLE} input\nflush chain inet ${TABLE} output`)));
    },
  };
}
