import { Inject, Injectable } from '@nestjs/common';
import { type FieldProblem, validationFailed } from '../common/errors';
import { HostResolver } from '../common/host-resolver';
import { isInwardAddress, isInwardName } from '../common/inward-address';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';

/** How long a name's resolution may take before the name is taken as it is. */
const LOOKUP_TIMEOUT_MS = 3_000;

/** A node host that resolves inward at connection time: nothing was sent to it. */
export class InwardHostError extends Error {
  constructor(host: string, inward: string) {
    super(
      `not connected: the host ${host === inward ? host : `${host} resolves to ${inward}, which`} ` +
        `points inward; see NODE_PRIVATE_HOSTS_ALLOWED`,
    );
  }
}

/**
 * Node hosts must point outward: the service connects to them (health checks, provisioning), so a
 * node at a loopback, link-local, private, multicast or unspecified address would make the node
 * list a port scanner of the service's own network (cloud metadata at 169.254.169.254 included).
 * Checked twice: when saved (every address the name resolves to; a name that does not resolve yet
 * is accepted, as there is nothing to reach), and at each connection, which goes to the address
 * just checked, since a name may point inward later (DNS rebinding).
 * NODE_PRIVATE_HOSTS_ALLOWED=true lifts the rule.
 */
@Injectable()
export class NodeHosts {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly resolver: HostResolver,
  ) {}

  /** Throws 400 VALIDATION_FAILED naming each field (e.g. `host`) that points inward. */
  async assertOutward(fields: Record<string, string | undefined>): Promise<void> {
    if (this.settings.nodePrivateHostsAllowed) return;
    const problems: FieldProblem[] = [];
    for (const [field, host] of Object.entries(fields)) {
      if (host === undefined) continue;
      const inward = await this.inwardOf(host, LOOKUP_TIMEOUT_MS);
      if (inward !== undefined) {
        problems.push({
          field,
          message:
            `must not point to a loopback, link-local, private, multicast or unspecified ` +
            `address (${host === inward ? host : `${host} is ${inward}`}); ` +
            'see NODE_PRIVATE_HOSTS_ALLOWED',
        });
      }
    }
    if (problems.length > 0) throw validationFailed(problems);
  }

  /**
   * The address to connect to for `host`, checked now: throws `InwardHostError` when the name or
   * any of its addresses points inward, and answers null when it does not resolve in time.
   */
  async connectAddress(host: string, timeoutMs = LOOKUP_TIMEOUT_MS): Promise<string | null> {
    if (this.settings.nodePrivateHostsAllowed) return host;
    if (isInwardName(host)) throw new InwardHostError(host, host);
    const addresses = await this.resolver.addresses(host, timeoutMs);
    const inward = addresses.find(isInwardAddress);
    if (inward !== undefined) throw new InwardHostError(host, inward);
    return addresses[0] ?? null;
  }

  private async inwardOf(host: string, timeoutMs: number): Promise<string | undefined> {
    if (isInwardName(host)) return host;
    return (await this.resolver.addresses(host, timeoutMs)).find(isInwardAddress);
  }
}
