/**
 * Which addresses a webhook may reach. Outside development and tests a webhook goes only to a public
 * address: loopback, private, link-local, CGNAT, multicast, documentation and other reserved ranges
 * are refused for IPv4 and IPv6, and IPv4 embedded in IPv6 (mapped, NAT64, 6to4) is judged by its
 * IPv4 part. The WHATWG URL parser already turns decimal, octal and hex host forms (`2130706433`,
 * `0x7f000001`, `127.1`) into dotted quads, so every check here sees canonical addresses.
 */
import net from 'node:net';

const blocked = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7],
  ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net6, prefix, 'ipv6');

/** The IPv4 address carried inside an IPv6 one (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(v6: string): string | null {
  const words = expandIpv6(v6);
  if (!words) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 6)) return v4(words[6]!, words[7]!); // deprecated IPv4-compatible ::a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return '0.0.0.0'; // local-use NAT64
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return null;
}

function expandIpv6(address: string): number[] | null {
  let a = address.toLowerCase();
  const dotted = a.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    a = a.slice(0, -dotted[1]!.length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string?];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const words = [...h, ...Array(Math.max(fill, 0)).fill('0'), ...t].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** Why `address` (an IP literal) may not receive webhooks, or null when it is a public address. */
export function refusedAddress(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = net.isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4') ? `${bare} is not a public address` : null;
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== null) return refusedAddress(v4) ? `${bare} is not a public address` : null;
    return blocked.check(bare, 'ipv6') ? `${bare} is not a public address` : null;
  }
  return `${address} is not an IP address`;
}

const LOCAL_NAMES = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i;

/**
 * Checks a webhook URL when it is saved: the scheme, no credentials, and (unless private targets are
 * allowed) a host that is not a private IP literal or a local name. Names are resolved and checked
 * again at each delivery (see sender.ts). Answers the reason for refusing, or null.
 */
export function refusedWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'URL is not valid';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'URL must use https';
  if (url.username || url.password) return 'URL must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = net.isIP(host) !== 0;
  const local = literal ? refusedAddress(host) !== null : LOCAL_NAMES.test(host);
  if (allowPrivate) {
    if (url.protocol === 'http:' && !local) return 'URL must use https (http is allowed for local receivers only)';
    return null;
  }
  if (url.protocol !== 'https:') return 'URL must use https';
  if (local) return 'URL must point to a public address';
  return null;
}
