import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may post. A URL whose host is (or resolves to) a private, loopback, link-local or
 * otherwise internal address would let any API key make the gateway call into its own network, so such
 * targets are refused unless the deployment allows them (WEBHOOK_ALLOW_PRIVATE). Every address a name
 * resolves to is checked, at registration and again at each delivery (the name may resolve elsewhere
 * by then); the delivery connects only to an address that passed.
 */
const internalV4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relays: a 6to4 address of a relay would hand the request to whatever relay is nearest
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  internalV4.addSubnet(net, bits, 'ipv4');
}

/** The 128 bits of an IPv6 address (already known to be one), zone id left out. */
function ipv6Bits(address: string): bigint {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::').map((part) => (part ? part.split(':') : []));
  const groups = tail === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** An IPv6 network, matched by its leading bits. */
function net6(address: string, length: number): (bits: bigint) => boolean {
  const shift = BigInt(128 - length);
  const prefix = ipv6Bits(address) >> shift;
  return (bits) => bits >> shift === prefix;
}

const v4Text = (bits: bigint) => [24n, 16n, 8n, 0n].map((shift) => Number((bits >> shift) & 255n)).join('.');
/** The 32 bits that start `from` bits into the address. */
const v4At = (bits: bigint, from: number) => v4Text(bits >> BigInt(96 - from));

const IPV4_COMPATIBLE = net6('::', 96);
const IPV4_MAPPED = net6('::ffff:0:0', 96);
const IPV4_TRANSLATED = net6('::ffff:0:0:0', 96);
const NAT64 = net6('64:ff9b::', 96);
const NAT64_LOCAL = net6('64:ff9b:1::', 48);
const SIX_TO_FOUR = net6('2002::', 16);
const TEREDO = net6('2001::', 32);

/**
 * The IPv4 addresses an IPv6 address carries, which is where a packet to it ends up: IPv4-compatible
 * (::/96, which holds :: and ::1 as 0.0.0.0 and 0.0.0.1), IPv4-mapped and -translated, NAT64
 * (64:ff9b::/96; the local-use 64:ff9b:1::/48 at each prefix length RFC 6052 allows inside it, as the
 * operator's translator may use any), 6to4 (2002::/16) and Teredo (2001::/32: its server, and its client
 * with the bits inverted). Empty for any other address.
 */
function embeddedIpv4(bits: bigint): string[] {
  if (IPV4_COMPATIBLE(bits) || IPV4_MAPPED(bits) || IPV4_TRANSLATED(bits) || NAT64(bits)) return [v4At(bits, 96)];
  if (NAT64_LOCAL(bits)) {
    // RFC 6052 keeps bits 64 to 71 zero and puts the IPv4 address around them.
    const squeezed = ((bits >> 64n) << 56n) | (bits & ((1n << 56n) - 1n));
    return [...[48, 56, 64].map((from) => v4Text(squeezed >> BigInt(120 - from - 32))), v4At(bits, 96)];
  }
  if (SIX_TO_FOUR(bits)) return [v4At(bits, 16)];
  if (TEREDO(bits)) return [v4At(bits, 32), v4Text(~bits & 0xffffffffn)];
  return [];
}

/**
 * IPv6 is public only inside global unicast (2000::/3), less the ranges set aside there: everything
 * outside it (unique local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast, discard-only
 * 100::/64, ...) is not reachable across the internet.
 */
const GLOBAL_UNICAST = net6('2000::', 3);
const RESERVED_IN_GLOBAL = [
  net6('2001:2::', 48), // benchmarking
  net6('2001:10::', 28), // ORCHID
  net6('2001:db8::', 32), // documentation
  net6('3fff::', 20), // documentation
];

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return internalV4.check(address, 'ipv4');
  if (family !== 6) return true;
  const bits = ipv6Bits(address);
  const carried = embeddedIpv4(bits);
  if (carried.length) return carried.some((v4) => internalV4.check(v4, 'ipv4'));
  return !GLOBAL_UNICAST(bits) || RESERVED_IN_GLOBAL.some((reserved) => reserved(bits));
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
      `the host ${host} resolves to a private, loopback or link-local address (${blocked.map((a) => a.address).join(', ')}); such targets are refused (WEBHOOK_ALLOW_PRIVATE=on allows them, for development)`,
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
