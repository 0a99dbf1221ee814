import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AppError } from '../common/errors';
import { SecretBox } from '../common/secret-box';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { LAST_ERROR_MAX, NODE_AUDIT_ACTIONS, NODE_PATHS, XRAY_UNIT } from './nodes.constants';
import { type NodeRecord, type NodeSecrets, NodesRepository } from './nodes.repository';
import { NodeHosts } from './node-hosts';
import { NodesService } from './nodes.service';
import {
  asRoot,
  CommandFailedError,
  HostKeyMismatchError,
  NodeShell,
  type ShellSession,
  shellQuote,
} from './node-shell';
import { agentSettings, coreConfig, XRAY_ACCESS_LOG } from './reality';

/** A file of this install (the repository root, seen from src/ or dist/), or undefined. */
function installFile(...parts: string[]): string | undefined {
  for (const up of ['../..', '../../..']) {
    const path = join(__dirname, up, ...parts);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** The provisioning script kept in the repository (deploy/node/). */
function readProvisionScript(): string {
  const path = installFile('deploy', 'node', 'provision.sh');
  if (path === undefined) throw new Error('deploy/node/provision.sh not found');
  return readFileSync(path, 'utf8');
}

const AGENT_BUNDLE = 'agent/dist/agent.js';

/**
 * Provisioning and forced restarts over SSH. The request only moves the node's row (one
 * conditional UPDATE, so one provisioning per node) and answers 202; the SSH work runs in the
 * background and ends the row in `ready` or `failed`. The work is idempotent, and a watchdog
 * fails a provisioning that outlived NODE_PROVISION_TIMEOUT_S (a crash, a restart, a hung host).
 */
@Injectable()
export class ProvisioningService implements OnModuleDestroy {
  private readonly logger = new Logger(ProvisioningService.name);
  private readonly script = readProvisionScript();
  /** Background work of this instance, awaited on shutdown. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly nodes: NodesRepository,
    private readonly registry: NodesService,
    private readonly shell: NodeShell,
    private readonly hosts: NodeHosts,
    @Inject(SecretBox) private readonly box: SecretBox,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async provision(actorId: string, id: string): Promise<void> {
    const startedAt = await this.claim(actorId, id);
    this.background(() => this.runProvision(id, startedAt));
  }

  async restart(actorId: string, id: string): Promise<void> {
    await this.requestRestart(actorId, id);
    this.background(() => this.runRestart(id));
  }

  /** Fails provisionings that ran too long; their ids. */
  @Transactional()
  async failStale(): Promise<string[]> {
    const ids = await this.nodes.failStaleProvisioning(
      this.settings.nodeProvisionTimeoutS,
      `provisioning did not finish within ${this.settings.nodeProvisionTimeoutS} s`,
    );
    for (const id of ids) {
      await this.registry.record(null, NODE_AUDIT_ACTIONS.provisionFailed, id, null, {
        reason: 'timeout',
      });
    }
    return ids;
  }

  /** Resolves when this instance's background SSH work has ended (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async onModuleDestroy(): Promise<void> {
    await this.idle();
  }

  @Transactional()
  private async claim(actorId: string, id: string): Promise<Date> {
    const startedAt = await this.nodes.claimProvisioning(id);
    if (!startedAt) {
      if (!(await this.nodes.get(id))) throw new AppError('NOT_FOUND', 'node not found');
      throw new AppError('NODE_BUSY', 'a provisioning of this node is running');
    }
    await this.registry.record(actorId, NODE_AUDIT_ACTIONS.provisionStarted, id, null, null);
    return startedAt;
  }

  @Transactional()
  private async requestRestart(actorId: string, id: string): Promise<void> {
    if (!(await this.nodes.get(id))) throw new AppError('NOT_FOUND', 'node not found');
    await this.registry.record(actorId, NODE_AUDIT_ACTIONS.restartRequested, id, null, null);
  }

  private background(work: () => Promise<void>): void {
    const promise = work()
      .catch((error: unknown) => this.logger.error({ err: error }, 'node background work failed'))
      .finally(() => this.running.delete(promise));
    this.running.add(promise);
  }

  /**
   * Uploads the script, the core's config, the agent (bundle, settings, TLS certificate and key)
   * and runs the script. A node made before the agent gets its certificate and secret first.
   */
  private async runProvision(id: string, startedAt: Date): Promise<void> {
    let error: string | null = null;
    const opened: string[] = [];
    // Where it stopped, for last_error: the step, its target and what to check there.
    let step: ProvisionStep | null = null;
    try {
      const agent = this.readAgentBundle();
      const before = await this.nodes.get(id);
      if (before) await this.registry.ensureAgentCredentials(before);
      if (before) step = { kind: 'connect', node: before };
      await this.withSession(id, opened, async (session, node, secrets) => {
        step = { kind: 'upload', node };
        const realityPrivateKey = this.open(secrets.realityPrivateKeyEnc, opened);
        const tlsKey = this.open(secrets.admissionKeyEnc!, opened);
        const nodeSecret = this.open(secrets.agentSecretEnc!, opened);
        await session.upload(NODE_PATHS.script, this.script, '700');
        const config = coreConfig(
          { ...node, realityPrivateKey },
          { core: 'xray', accessLog: XRAY_ACCESS_LOG },
        );
        await session.upload(NODE_PATHS.xrayConfig, JSON.stringify(config, null, 2), '600');
        await session.upload(
          NODE_PATHS.agentSettings,
          agentSettings({
            nodeId: node.id,
            publicApiUrl: this.settings.publicApiUrl,
            nodeSecret,
            admissionPort: node.admissionPort,
            tunnelPort: node.tunnelPort,
            tunnelFlow: node.tunnelFlow,
          }),
          '600',
        );
        await session.upload(NODE_PATHS.agentBundle, agent, '600');
        await session.upload(NODE_PATHS.tlsCert, secrets.admissionCertPem!, '600');
        await session.upload(NODE_PATHS.tlsKey, tlsKey, '600');
        const xrayDigest = this.settings.xrayArchiveSha256;
        const command =
          `${sudo(node)}bash ${shellQuote(NODE_PATHS.script)} ${node.tunnelPort} ${node.admissionPort}` +
          (xrayDigest ? ` ${xrayDigest}` : '');
        step = { kind: 'script', node };
        const result = await session.run(command);
        if (result.code !== 0) throw new CommandFailedError('provision.sh', result);
      });
    } catch (cause) {
      error = this.describe(cause, opened, step);
      this.logger.warn({ node_id: id, error }, 'node provisioning failed');
    }
    await this.finish(id, startedAt, error);
  }

  @Transactional()
  private async finish(id: string, startedAt: Date, error: string | null): Promise<void> {
    const applied = await this.nodes.finishProvisioning(
      id,
      startedAt,
      error === null ? 'ready' : 'failed',
      error,
    );
    if (!applied) return; // the watchdog ended it meanwhile
    const action =
      error === null ? NODE_AUDIT_ACTIONS.provisioned : NODE_AUDIT_ACTIONS.provisionFailed;
    await this.registry.record(null, action, id, null, error === null ? null : { error });
  }

  private async runRestart(id: string): Promise<void> {
    let error: string | null = null;
    const opened: string[] = [];
    try {
      await this.withSession(id, opened, async (session, node) => {
        const result = await session.run(`${sudo(node)}systemctl restart ${XRAY_UNIT}`);
        if (result.code !== 0) throw new CommandFailedError('systemctl restart', result);
      });
    } catch (cause) {
      error = this.describe(cause, opened);
      this.logger.warn({ node_id: id, error }, 'node restart failed');
    }
    await this.recordRestart(id, error);
  }

  @Transactional()
  private async recordRestart(id: string, error: string | null): Promise<void> {
    await this.nodes.setLastError(id, error === null ? null : `restart: ${error}`);
    const action = error === null ? NODE_AUDIT_ACTIONS.restarted : NODE_AUDIT_ACTIONS.restartFailed;
    await this.registry.record(null, action, id, null, error === null ? null : { error });
  }

  /**
   * The agent bundle to upload: NODE_AGENT_BUNDLE, else `agent/dist/agent.js` of this install.
   * Read at each provisioning, so a rebuilt agent goes out without restarting the service.
   */
  private readAgentBundle(): string {
    const path = this.settings.nodeAgentBundle ?? installFile(...AGENT_BUNDLE.split('/'));
    if (path === undefined || !existsSync(path)) {
      throw new Error(
        `the node agent bundle ${path ?? AGENT_BUNDLE} is missing: run npm run build (or set NODE_AGENT_BUNDLE)`,
      );
    }
    return readFileSync(path, 'utf8');
  }

  /** Opens a sealed value, remembering it so that no error text can carry it. */
  private open(sealed: string, opened: string[]): string {
    const plain = this.box.open(sealed);
    opened.push(plain);
    return plain;
  }

  /** Connects with the node's user and key, checking (or recording) the host key first. */
  private async withSession(
    id: string,
    opened: string[],
    work: (session: ShellSession, node: NodeRecord, secrets: NodeSecrets) => Promise<void>,
  ): Promise<void> {
    const node = await this.nodes.get(id);
    const secrets = await this.nodes.secrets(id);
    if (!node || !secrets) throw new Error('the node was deleted');
    // Checked again now, and connected to the address checked: the name may point inward since.
    const address = await this.hosts.connectAddress(node.host);
    if (address === null) throw new Error(`the host ${node.host} does not resolve`);
    const privateKey = this.open(secrets.sshPrivateKeyEnc, opened);
    const session = await this.shell.connect({
      host: address,
      port: node.sshPort,
      username: node.sshUser,
      privateKey,
      hostKeySha256: node.sshHostKeySha256,
    });
    try {
      if (node.sshHostKeySha256 === null) await this.nodes.pinHostKey(id, session.hostKeySha256);
      await work(session, node, secrets);
    } finally {
      session.close();
    }
  }

  /**
   * A short reason for `last_error`: no transcript, and never a secret. During a provisioning
   * (`step`), what failed where comes first and what to check last, cut first when it is long.
   */
  private describe(error: unknown, secrets: string[], step: ProvisionStep | null = null): string {
    let text: string;
    if (error instanceof HostKeyMismatchError) {
      text = `host key mismatch: the server presented ${error.seen}`;
    } else if (error instanceof CommandFailedError) {
      const lastLine = (error.result.stderr || error.result.stdout).trim().split('\n').pop() ?? '';
      text = lastLine ? `${error.message}: ${lastLine}` : error.message;
    } else {
      text = error instanceof Error ? error.message : String(error);
    }
    // A host key mismatch says itself what to check; AppErrors are the service's own refusals.
    if (step !== null && !(error instanceof AppError) && !(error instanceof HostKeyMismatchError)) {
      text = stepReason(step, text);
    }
    for (const secret of [this.settings.internalSecret, ...secrets]) {
      text = text.split(secret).join('[secret]');
    }
    return text
      .replace(/-----BEGIN[\s\S]*?(-----END[^-]*-----|$)/g, '[key]')
      .slice(0, LAST_ERROR_MAX);
  }
}

/** A provisioning's step, on the node as it was read for it. */
interface ProvisionStep {
  kind: 'connect' | 'upload' | 'script';
  node: NodeRecord;
}

/** `reason` with the step and its target before it and what to check after it. */
function stepReason({ kind, node }: ProvisionStep, reason: string): string {
  const target = `${node.sshUser}@${node.host}:${node.sshPort}`;
  switch (kind) {
    case 'connect':
      return (
        `SSH to ${target}: ${reason}; check that the port is open to this service and that ` +
        `the node's SSH key is in ~${node.sshUser}/.ssh/authorized_keys`
      );
    case 'upload':
      return (
        `uploading to ${target}: ${reason}; check free space in ${NODE_PATHS.dir}` +
        (node.sshUser === 'root' ? '' : ` and that ${node.sshUser} may sudo without a password`)
      );
    case 'script':
      return (
        `${NODE_PATHS.script} on ${target}: ${reason}; check that the node reaches the internet ` +
        `(it downloads Xray) and ${node.tunnelPort}/${node.admissionPort} are free, or run ` +
        'the script there by hand to see all of its output'
      );
  }
}

function sudo(node: NodeRecord): string {
  return asRoot(node.sshUser);
}
