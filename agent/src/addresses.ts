import { parseEmail } from './emails';

/** How long a device's address is remembered after its last connection closed or was seen. */
export const ADDRESS_TTL_MS = 10 * 60_000;
/** A connection the access log named this recently counts as open even if `ss` missed it. */
const OPEN_GRACE_MS = 5_000;
/** Connections remembered per device address; older ones beyond this are not closed. */
const PER_DEVICE = 256;

/** A device with an open connection on this node, as a traffic report's `online` names it. */
export interface OnlineDevice {
  device_id: string;
  address: string;
  since: string;
}

interface Presence {
  deviceId: string;
  /** The client's address (no port) of its newest connection. */
  address: string;
  /** When that address's first connection was seen (ms). */
  since: number;
  lastSeenAt: number;
  /** The connections from `address` (`ip:port` as the access log names them) and when seen. */
  connections: Map<string, number>;
}

/**
 * One address per device on this node: the newest wins. The access log names each accepted
 * connection's client (`ip:port`) and email; when a device's connection comes from an address other
 * than its last one, the connections from the old address are answered to be closed (a phone moving
 * from Wi-Fi to mobile keeps working at once; two people sharing a device fight over it). Addresses
 * live here only, for minutes, never in the journal or in a log line.
 */
export class DeviceAddresses {
  private readonly byEmail = new Map<string, Presence>();
  /** Times a device came from a new address while its old one was remembered, since the start. */
  switches = 0;

  /** A device's connection accepted: the connections of its previous address to close, if any. */
  seen(email: string, endpoint: string, now: number): { switched: boolean; stale: string[] } {
    const owner = parseEmail(email);
    if (!owner?.deviceId) return { switched: false, stale: [] };
    const address = endpointAddress(endpoint);
    const known = this.byEmail.get(email);
    if (known && known.address === address) {
      known.connections.set(endpoint, now);
      known.lastSeenAt = now;
      if (known.connections.size > PER_DEVICE) {
        known.connections.delete(known.connections.keys().next().value as string);
      }
      return { switched: false, stale: [] };
    }
    this.byEmail.set(email, {
      deviceId: owner.deviceId,
      address,
      since: now,
      lastSeenAt: now,
      connections: new Map([[endpoint, now]]),
    });
    if (!known) return { switched: false, stale: [] };
    this.switches += 1;
    return { switched: true, stale: [...known.connections.keys()] };
  }

  /** Forgets a device (its connections were closed). */
  forget(email: string): void {
    this.byEmail.delete(email);
  }

  /** The emails of tracked devices among `deviceIds`. */
  emailsOf(deviceIds: ReadonlySet<string>): string[] {
    const emails: string[] = [];
    for (const [email, presence] of this.byEmail) {
      if (deviceIds.has(presence.deviceId)) emails.push(email);
    }
    return emails;
  }

  /**
   * The devices with an open connection. `established` is the set of the core's open connections'
   * peers (`ss`), or null when it could not be read: then a connection counts as open for
   * ADDRESS_TTL_MS after it was seen. Forgets connections that closed and devices long gone.
   */
  online(established: ReadonlySet<string> | null, now: number): OnlineDevice[] {
    const online: OnlineDevice[] = [];
    for (const [email, presence] of this.byEmail) {
      for (const [endpoint, seenAt] of presence.connections) {
        const open = established
          ? established.has(normalEndpoint(endpoint)) || now - seenAt < OPEN_GRACE_MS
          : now - seenAt < ADDRESS_TTL_MS;
        if (!open) presence.connections.delete(endpoint);
      }
      if (presence.connections.size > 0) {
        presence.lastSeenAt = now;
        online.push({
          device_id: presence.deviceId,
          address: presence.address,
          since: new Date(presence.since).toISOString(),
        });
      } else if (now - presence.lastSeenAt > ADDRESS_TTL_MS) {
        this.byEmail.delete(email);
      }
    }
    return online;
  }
}

/** The address part of `ip:port` or `[ip6]:port`, IPv4-mapped IPv6 written as IPv4. */
export function endpointAddress(endpoint: string): string {
  const normal = normalEndpoint(endpoint);
  if (normal.startsWith('[')) return normal.slice(1, normal.indexOf(']'));
  const colon = normal.lastIndexOf(':');
  return colon > 0 ? normal.slice(0, colon) : normal;
}

/** `[::ffff:1.2.3.4]:5` as `1.2.3.4:5`, so `ss`'s and the core's spellings compare equal. */
export function normalEndpoint(endpoint: string): string {
  const mapped = /^\[::ffff:(\d+\.\d+\.\d+\.\d+)\](:\d+)$/i.exec(endpoint);
  return mapped ? `${mapped[1]}${mapped[2]}` : endpoint;
}
