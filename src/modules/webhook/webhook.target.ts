import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may post. A URL whose host is (or resolves to) a private, loopback, link-local or
 * otherwise internal address would let any API key make the gateway call into its own network, so such
 * targets are refused unless the deployment allows them (WEBHOOK_ALLOW_PRIVATE). Every address a name
 * resolves to is checked, at registration and again at each delivery (the name may resolve elsewhere
 * by then); the delivery connects only to an address that passed.
 */
const internal = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  internal.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  internal.addSubnet(net, bits, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or IPv4-compatible IPv6 address (::ffff:127.0.0.1), if any. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return internal.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    return v4 ? internal.check(v4, 'ipv4') : internal.check(address, 'ipv6');
  }
  return true;
}

export class TargetRefusedError extends Error {}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  if (isIP(host)) return Promise.resolve([{ address: host, family: isIP(host) }]);
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}

/**
 * Every address of `host`; throws TargetRefusedError when the name does not resolve, or when any address
 * is internal and `allowPrivate` is off. Returns whether any address is internal.
 */
export async function checkHost(host: string, allowPrivate: boolean): Promise<{ addresses: LookupAddress[]; internal: boolean }> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch (err) {
    throw new TargetRefusedError(`the host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!addresses.length) throw new TargetRefusedError(`the host ${host} does not resolve`);
  const blocked = addresses.filter((a) => isInternalAddress(a.address));
  if (blocked.length && !allowPrivate) {
    throw new TargetRefusedError(
      `the host ${host} resolves to a private, loopback or link-local address (${blocked.map((a) => a.address).join(', ')}); such targets are refused`,
    );
  }
  return { addresses, internal: blocked.length > 0 };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves the name, checks every address, and hands the socket only
 * addresses that passed: no second resolution between the check and the connection (DNS rebinding).
 */
export function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    checkHost(hostname, allowPrivate).then(
      ({ addresses }) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
      (err: Error) => callback(Object.assign(err, { code: 'ETARGETREFUSED' })),
    );
  };
}
