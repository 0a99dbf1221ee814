import { Inject, Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type FieldProblem, validationFailed } from '../common/errors';
import { isInwardAddress } from '../common/inward-address';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';

/** How long a name's resolution may take before the name is taken as it is. */
const LOOKUP_TIMEOUT_MS = 3_000;

/**
 * Node hosts must point outward: the service connects to them (health checks, provisioning), so a
 * node at a loopback, link-local, private or unspecified address would make the node list a port
 * scanner of the service's own network (cloud metadata at 169.254.169.254 included). Names are
 * resolved and every address they resolve to is checked; a name that does not resolve (yet) is
 * accepted, as there is nothing to reach. NODE_PRIVATE_HOSTS_ALLOWED=true lifts the rule.
 */
@Injectable()
export class NodeHosts {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /** Throws 400 VALIDATION_FAILED naming each field (e.g. `host`) that points inward. */
  async assertOutward(fields: Record<string, string | undefined>): Promise<void> {
    if (this.settings.nodePrivateHostsAllowed) return;
    const problems: FieldProblem[] = [];
    for (const [field, host] of Object.entries(fields)) {
      if (host === undefined) continue;
      const inward = (await addressesOf(host)).find(isInwardAddress);
      if (inward !== undefined) {
        problems.push({
          field,
          message:
            `must not point to a loopback, link-local, private or unspecified address ` +
            `(${host === inward ? host : `${host} is ${inward}`}); see NODE_PRIVATE_HOSTS_ALLOWED`,
        });
      }
    }
    if (problems.length > 0) throw validationFailed(problems);
  }
}

async function addressesOf(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((done) => {
    timer = setTimeout(() => done([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const resolved = lookup(host, { all: true, verbatim: true }).then(
      (addresses) => addresses.map((a) => a.address),
      () => [],
    );
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
