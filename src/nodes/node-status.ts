import type { NodeStatus, ProvisionState } from './entities/node.entity';

/** The agent's report period: REPORT_INTERVAL_S as provisioning writes it (reality.ts). */
export const AGENT_REPORT_INTERVAL_S = 60;

/** An agent silent for two periods has missed a report, not just sent it late. */
export const AGENT_SILENT_AFTER_S = 2 * AGENT_REPORT_INTERVAL_S;

/**
 * The state staff are shown and the overview counts. The health check's `online` only says the
 * tunnel port answers TCP, which a half-installed node or a dead agent does too; a node is shown
 * online only when it is provisioned and its agent reported within `AGENT_SILENT_AFTER_S`, else
 * `unknown`. Routing keeps its own rule (routingNodes). The same rule in SQL: `shownOnlineSql`.
 */
export function shownStatus(
  node: { status: NodeStatus; provisionState: ProvisionState; lastReportAt: Date | null },
  now: Date,
): NodeStatus {
  if (node.status !== 'online') return node.status;
  if (node.provisionState !== 'ready' || node.lastReportAt === null) return 'unknown';
  const silentMs = now.getTime() - node.lastReportAt.getTime();
  return silentMs > AGENT_SILENT_AFTER_S * 1000 ? 'unknown' : 'online';
}

/** The agent of the nodes row `alias` reported within `AGENT_SILENT_AFTER_S`, in SQL. */
export function agentReportedSql(alias: string): string {
  return `${alias}.last_report_at >= now() - make_interval(secs => ${AGENT_SILENT_AFTER_S})`;
}

/** `shownStatus(…) = 'online'` for the nodes row `alias`, in SQL. */
export function shownOnlineSql(alias: string): string {
  return (
    `(${alias}.status = 'online' AND ${alias}.provision_state = 'ready' AND ` +
    `${agentReportedSql(alias)})`
  );
}
