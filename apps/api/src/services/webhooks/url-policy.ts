import { lookup } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '@inferq/core';

// SSRF: a webhook may only reach public unicast addresses, unless the operator
// allows private ones (WEBHOOK_ALLOW_PRIVATE, for development and tests).
// ipaddr.js names every special range (loopback, private, linkLocal,
// uniqueLocal, carrierGradeNat, multicast, unspecified, reserved, the IPv6
// transition ranges that embed IPv4, …); everything but `unicast` is refused.

/** The special range an address is in, when that refuses it; IPv4-mapped IPv6 counts as its IPv4. */
export function refusedRange(address: string): string | undefined {
  const range = ipaddr.process(address).range();
  return range === 'unicast' ? undefined : range;
}

const refused = (detail: string) =>
  new AppError('WEBHOOK_URL_REFUSED', detail, { errors: [{ pointer: '/body/webhook/url', code: 'WEBHOOK_URL_REFUSED', detail }] });

/** URL hosts keep IPv6 literals in brackets. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** An http(s) URL whose host, if it is a literal address, is allowed; names are checked where they are resolved. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw refused('only http and https URLs can receive webhooks');
  const host = hostOf(url);
  const range = !allowPrivate && isIP(host) ? refusedRange(host) : undefined;
  if (range) throw refused(`${host} is a ${range} address`);
  return url;
}

/** At submit: the URL, and every address its host resolves to now, must be allowed. DNS is asked only for names. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<void> {
  const host = hostOf(parseWebhookUrl(raw, allowPrivate));
  if (allowPrivate || isIP(host)) return;
  const addresses = await lookupAll(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
    throw refused(`${host} does not resolve (${err.code ?? err.message})`);
  });
  for (const { address } of addresses) {
    const range = refusedRange(address);
    if (range) throw refused(`${host} resolves to ${address}, a ${range} address`);
  }
}

/**
 * At delivery: a lookup for http.request that fails when the name resolves to
 * a refused address. The connection goes to the address checked here, so a
 * name that changed since submit (DNS rebinding) cannot reach a private one.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const bad = addresses.find((a) => refusedRange(a.address));
    if (bad)
      return callback(
        Object.assign(new Error(`${hostname} resolves to ${bad.address}, a ${refusedRange(bad.address)} address`), { code: 'WEBHOOK_URL_REFUSED' }),
        '',
      );
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
