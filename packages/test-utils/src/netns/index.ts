export { namespacesUnavailable } from './commands.ts';
export { createPrivateNetwork, type NetnsHost, type PrivateNetwork } from './network.ts';
export { createLinkFaults, type LinkFaults } from './link-faults.ts';
export { startDelayRelay, type DelayRelay } from './delay-relay.ts';
export { startHostsApart, type HostsApart, type HostsApartApi, type HostsApartWorker, type HostsApartOptions } from './hosts-apart.ts';
