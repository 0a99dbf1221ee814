import { promises as fs } from 'node:fs';
import type * as https from 'node:https';
import { Admission } from './admission';
import { ConnectionCloser } from './connections';
import { CoreClient } from './core-client';
import { CredentialSync } from './credential-sync';
import { Credentials } from './credentials';
import { Journal, type JournalState } from './journal';
import { enforceLimits } from './limits';
import { reason, type Log } from './log';
import { Reporter } from './reporter';
import { ServiceClient } from './service-client';
import { Sessions } from './sessions';
import type { AgentSettings } from './settings';

/**
 * How often the core's uptime is checked for a restart (its users must be added again): every
 * second, so that devices work again within the contract's 5 s of the core's return.
 */
const CORE_WATCH_MS = 1_000;
/** How often the core's access log is read (a device's new address closes its old connections). */
const ACCESS_LOG_READ_MS = 1_000;
/** Longest wait between tries of a failed report. */
const RETRY_MAX_MS = 30_000;

/**
 * The agent: restores the journal's sessions and device credentials into the core, then serves
 * admissions and nudges and runs its loops (reports, limits, credentials, the core watch, the
 * access log), each one at a time, none stopping on a failure.
 */
export class NodeAgent {
  private readonly core: CoreClient;
  private readonly service: ServiceClient;
  private readonly connections: ConnectionCloser;
  private state!: JournalState;
  private sessions!: Sessions;
  private reporter!: Reporter;
  private credentials!: Credentials;
  private sync!: CredentialSync;
  private server: https.Server | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;
  private coreStartedAt = 0;

  constructor(
    private readonly settings: AgentSettings,
    private readonly log: Log,
  ) {
    this.core = new CoreClient(settings.coreApi, settings.corePrefix, settings.coreInboundTag);
    this.service = new ServiceClient(settings.apiUrl, settings.nodeId, settings.nodeSecret);
    this.connections = new ConnectionCloser(settings.coreAccessLog, settings.tunnelPort, log);
  }

  /** The port admission listens on (the chosen one when ADMISSION_PORT is 0). */
  get admissionPort(): number {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async start(): Promise<void> {
    const settings = this.settings;
    this.state = await Journal.read(settings.journalDir);
    const journal = new Journal(settings.journalDir, () => this.state);
    this.sessions = new Sessions(
      this.state,
      journal,
      this.core,
      this.connections,
      settings,
      this.log,
    );
    this.credentials = new Credentials(
      this.state,
      journal,
      this.core,
      this.connections,
      settings.flow,
      this.log,
    );
    this.sync = new CredentialSync(this.credentials, this.service, this.log);
    this.reporter = new Reporter(
      this.state,
      journal,
      this.core,
      this.service,
      this.sessions,
      this.log,
      Date.now,
      this.credentials,
    );
    await this.connections.start();
    this.coreStartedAt = Date.now() - (await this.core.uptime()) * 1000;
    // The journal's set first: a node whose service is away serves what it last had.
    await this.sessions.restore();
    await this.credentials.restore();
    const admission = new Admission(this.sessions, this.service, settings.flow, this.log, {
      nodeId: settings.nodeId,
      secret: settings.nodeSecret,
      nudged: (version) => this.sync.nudged(version),
    });
    this.server = await admission.listen({
      host: settings.admissionHost,
      port: settings.admissionPort,
      cert: await fs.readFile(settings.tlsCert),
      key: await fs.readFile(settings.tlsKey),
    });
    this.log('agent_started', {
      admission_port: this.admissionPort,
      sessions: this.state.sessions.length,
      devices: this.credentials.size,
      credentials_version: this.credentials.version,
      pending_report: this.state.pending !== null,
    });
    // A report journaled before a restart goes at once: it is a period old already, and its bytes
    // are not counted (nor their limits enforced) until it is delivered.
    this.loop(
      'report',
      settings.reportIntervalS * 1000,
      () => this.report(),
      this.state.pending === null ? undefined : 0,
    );
    this.loop('limits', settings.limitsIntervalS * 1000, () => this.limits());
    this.loop('credentials', settings.credentialsPollS * 1000, () => this.sync.request());
    this.loop('core_watch', CORE_WATCH_MS, () => this.watchCore());
    this.loop('access_log', ACCESS_LOG_READ_MS, () => this.connections.catchUp());
    void this.sync.request();
  }

  /** Stops taking admissions and loops, lets the running work finish, and closes the clients. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    this.credentials?.stop();
    await this.sync?.stop();
    await Promise.allSettled([...this.running]);
    this.core.close();
    this.service.close();
    this.log('agent_stopped');
  }

  /** One report cycle, retried with backoff until the service acknowledges it. */
  private async report(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt += 1) {
      const started = process.hrtime.bigint();
      const delivered = await this.reporter.cycle();
      this.log('report_cycle', {
        delivered,
        sessions: this.state.sessions.length,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      });
      if (delivered) break;
      const wait = Math.min(RETRY_MAX_MS, 1000 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise<void>((resolve) => this.schedule(() => resolve(), wait));
    }
    await this.sessions.endIdle(this.settings.sessionIdleS * 1000);
  }

  private async limits(): Promise<void> {
    await enforceLimits(this.sessions, this.service, this.log);
  }

  private async watchCore(): Promise<void> {
    const startedAt = Date.now() - (await this.core.uptime()) * 1000;
    if (startedAt > this.coreStartedAt + 2_500) {
      this.log('core_restart_seen', {
        sessions: this.state.sessions.length,
        devices: this.credentials.size,
      });
      this.coreStartedAt = startedAt;
      await Promise.all([this.sessions.restore(), this.credentials.restore()]);
    } else if (this.credentials.needsRepair) {
      await this.credentials.restore();
    }
    this.coreStartedAt = startedAt;
  }

  /**
   * Runs `work` every `periodMs` after the previous run ended, the first time after `firstMs` (a
   * period unless given); logs and survives its failures.
   */
  private loop(
    name: string,
    periodMs: number,
    work: () => Promise<void>,
    firstMs = periodMs,
  ): void {
    const tick = (): void => {
      if (this.stopped) return;
      const run = work()
        .catch((error: unknown) => this.log(`${name}_failed`, { error: reason(error) }))
        .finally(() => {
          this.running.delete(run);
          this.schedule(tick, periodMs);
        });
      this.running.add(run);
    };
    this.schedule(tick, firstMs);
  }

  private schedule(callback: () => void, ms: number): void {
    if (this.stopped) {
      callback();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      callback();
    }, ms);
    this.timers.add(timer);
  }
}
