import { Metrics } from '../../src/metrics/metrics.service';
import type { TestApp } from './app';
import type { TestUser } from './factories';
import { metricValue, parseMetrics } from './metrics';
import { createNode, nodeSecret } from './nodes';

/**
 * Two nodes made by `owner`, with their agents' secrets: for the agents' lanes' tests, a node
 * speaking for itself (`a`) and another one speaking for it (`b`).
 */
export async function twoNodes(
  t: TestApp,
  owner: TestUser,
): Promise<{ nodeA: string; nodeB: string; secretA: string; secretB: string }> {
  const nodeA = (await createNode(t, owner, { name: 'a' })).id;
  const nodeB = (await createNode(t, owner, { name: 'b' })).id;
  return { nodeA, nodeB, secretA: await nodeSecret(t, nodeA), secretB: await nodeSecret(t, nodeB) };
}

/** How many requests a lane has answered itself so far, by its counter (`vpn_…_lane_answers_total`). */
export async function laneCount(
  t: TestApp,
  counter: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return metricValue(parseMetrics(await t.app.get(Metrics).registry.metrics()), counter, labels);
}
