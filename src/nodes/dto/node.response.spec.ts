import type { RoutingNode } from '../nodes.repository';
import { RoutingEntryResponse } from './node.response';

describe('the routing answer', () => {
  const node = (n: number, name: string): RoutingNode => ({
    id: `${n}${n}${n}${n}${n}${n}${n}${n}-0000-4000-8000-000000000000`,
    name,
    host: `node-${n}.example.com`,
    tunnelPort: 443,
    tunnelProtocol: 'vless',
    tunnelFlow: 'xtls-rprx-vision',
    shortId: 'a1b2c3d4',
    publicKey: 'bG9uZy1wdWJsaWMta2V5LWluLWJhc2U2NHVybC1mb3JtYXQ',
    sniDomain: 'www.example.com',
    admissionPort: 8443 + n,
    admissionCertSha256: String(n).repeat(64),
  });

  it('is the JSON of every entry, names needing escapes included, whoever asks', () => {
    const nodes = [node(1, 'Frankfurt "A"'), node(2, 'Zürich\\\n\u2028'), node(3, '東京')];
    for (const tokens of [
      ['t1', 't2', 't3'],
      ['vst2.x.y', 'vst2.z', 'vst2.w'],
    ]) {
      const text = RoutingEntryResponse.serialize(nodes, tokens);
      expect(JSON.parse(text)).toEqual(
        nodes.map((n, i) => RoutingEntryResponse.from(n, tokens[i])),
      );
      expect(text).toBe(
        JSON.stringify(nodes.map((n, i) => RoutingEntryResponse.from(n, tokens[i]))),
      );
    }
  });

  it('is right for lists that share nodes in other orders, as share buckets do', () => {
    const [a, b, c] = [node(4, 'Oslo'), node(5, 'Riga'), node(6, 'Lima')];
    const lists = [[a, b], [c, a], [b, c, a], [a]];
    for (const round of [1, 2]) {
      for (const list of lists) {
        const tokens = list.map((n) => `vst2.${round}.${n.name}`);
        expect(RoutingEntryResponse.serialize(list, tokens)).toBe(
          JSON.stringify(list.map((n, i) => RoutingEntryResponse.from(n, tokens[i]))),
        );
      }
    }
  });

  it('is an empty array without nodes', () => {
    expect(RoutingEntryResponse.serialize([], [])).toBe('[]');
  });
});
