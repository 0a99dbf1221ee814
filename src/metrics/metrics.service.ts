import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { InvalidReason } from '../internal/dto/internal.dto';
import type { JobOutcome, JobRunRecorder } from '../scheduler/job-run-recorder';

/** Refused: a repeat of an applied report, or one from an unknown node. */
export type TrafficReportResult = 'applied' | 'refused';
/** `valid`, or the reason the token was refused (the contract's `reason`). */
export type TokenValidationResult = 'valid' | InvalidReason;
/** Failed: something went wrong on our side (not a user's mistake the bot explained). */
export type BotUpdateResult = 'handled' | 'failed';

/**
 * The service's Prometheus registry and its named counters. Other modules record through these
 * methods only, so every metric name is defined here once. One registry per application (not
 * prom-client's global one), so that several apps in one process (tests) do not collide.
 */
@Injectable()
export class Metrics implements JobRunRecorder {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status class.',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly httpInFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests being served now.',
    registers: [this.registry],
  });

  private readonly trafficReports = new Counter({
    name: 'vpn_traffic_reports_total',
    help: 'Traffic reports from nodes, applied or refused (a repeat, or an unknown node).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly trafficBytes = new Counter({
    name: 'vpn_traffic_bytes_total',
    help: 'Traffic bytes counted against users from applied reports.',
    registers: [this.registry],
  });

  private readonly tokenValidations = new Counter({
    name: 'vpn_token_validations_total',
    help: 'Proxy session-token validations by result: valid or the reason refused.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly validateLaneAnswers = new Counter({
    name: 'vpn_validate_lane_answers_total',
    help: 'Token validations (POST /internal/validate) answered by the fast lane ahead of the general request pipeline; the others went through it.',
    registers: [this.registry],
  });

  private readonly credentialsLaneAnswers = new Counter({
    name: 'vpn_credentials_lane_answers_total',
    help: "Nodes' device-set polls (GET /internal/credentials) answered by the fast lane ahead of the general request pipeline; the others went through it.",
    registers: [this.registry],
  });

  private readonly trafficLaneAnswers = new Counter({
    name: 'vpn_traffic_lane_answers_total',
    help: "Nodes' traffic reports (POST /internal/traffic) answered by the fast lane as soon as their body was read plainly; the others went through the general request pipeline.",
    registers: [this.registry],
  });

  private readonly signedInLaneAnswers = new Counter({
    name: 'vpn_signed_in_lane_answers_total',
    help: 'Signed-in GET requests (GET /users/me, GET /nodes/routing) answered by the fast lane ahead of the general request pipeline, by route; the others went through it.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  private readonly trafficReportsRead = new Counter({
    name: 'vpn_traffic_reports_read_total',
    help: "Traffic reports (POST /internal/traffic) read straight from their bytes by the route's own reader; the others were parsed the general way.",
    registers: [this.registry],
  });

  private readonly botUpdates = new Counter({
    name: 'vpn_bot_updates_total',
    help: 'Telegram bot updates, handled or failed.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly jobRuns = new Counter({
    name: 'vpn_job_runs_total',
    help: 'Scheduled job ticks on this instance by job and outcome (skipped: another instance ran that period; unavailable: no database).',
    labelNames: ['job', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly jobDuration = new Histogram({
    name: 'vpn_job_duration_seconds',
    help: 'Duration of the scheduled job runs this instance made.',
    labelNames: ['job'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 120],
    registers: [this.registry],
  });

  readonly readFailures = new Counter({
    name: 'vpn_metrics_read_failures_total',
    help: 'Scrape-time reads that failed or timed out; their metrics kept the last values read.',
    labelNames: ['group'] as const,
    registers: [this.registry],
  });

  private readonly subscriptionFetches = new Counter({
    name: 'vpn_subscription_fetches_total',
    help: 'Fetches of subscription links by format (base64, xray-json, mihomo, sing-box, page, info) and outcome (ok, or why nothing connects).',
    labelNames: ['format', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly devicesMade = new Counter({
    name: 'vpn_devices_created_total',
    help: 'Devices made, by source (hwid, app, link).',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  private readonly deviceSwitches = new Counter({
    name: 'vpn_device_address_switches_total',
    help: 'Times a device connected from a new node or network while connected elsewhere (the older connection is closed).',
    registers: [this.registry],
  });

  private readonly recounts = new Counter({
    name: 'vpn_traffic_batches_recounted_total',
    help: 'Traffic batches counted again from their record: the guess of it they were first counted on was wrong (a report sent again, a changed multiplier, a deleted node).',
    registers: [this.registry],
  });

  private readonly nudges = new Counter({
    name: 'vpn_credential_nudges_total',
    help: 'Nudges sent to node agents that their device set changed, by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  constructor() {
    // Event-loop lag, heap, GC, file descriptors, CPU.
    collectDefaultMetrics({ register: this.registry });
  }

  trafficReport(result: TrafficReportResult, bytes = 0n): void {
    this.trafficReports.inc({ result });
    if (result === 'applied' && bytes > 0n) this.trafficBytes.inc(Number(bytes));
  }

  subscriptionFetch(format: string, outcome: string): void {
    this.subscriptionFetches.inc({ format, outcome });
  }

  deviceCreated(source: string): void {
    this.devicesMade.inc({ source });
  }

  deviceSwitched(count: number): void {
    if (count > 0) this.deviceSwitches.inc(count);
  }

  trafficBatchRecounted(): void {
    this.recounts.inc();
  }

  credentialNudges(sent: number, failed: number): void {
    if (sent > 0) this.nudges.inc({ result: 'sent' }, sent);
    if (failed > 0) this.nudges.inc({ result: 'failed' }, failed);
  }

  tokenValidation(result: TokenValidationResult): void {
    this.tokenValidations.inc({ result });
  }

  validateLaneAnswered(): void {
    this.validateLaneAnswers.inc();
  }

  credentialsLaneAnswered(): void {
    this.credentialsLaneAnswers.inc();
  }

  trafficLaneAnswered(): void {
    this.trafficLaneAnswers.inc();
  }

  signedInLaneAnswered(route: string): void {
    this.signedInLaneAnswers.inc({ route });
  }

  trafficReportRead(): void {
    this.trafficReportsRead.inc();
  }

  botUpdate(result: BotUpdateResult): void {
    this.botUpdates.inc({ result });
  }

  jobRun(job: string, outcome: JobOutcome, seconds?: number): void {
    this.jobRuns.inc({ job, outcome });
    if (seconds !== undefined) this.jobDuration.observe({ job }, seconds);
  }
}
