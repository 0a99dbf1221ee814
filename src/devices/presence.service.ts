import { isIPv4 } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { Metrics } from '../metrics/metrics.service';
import { DevicesRepository } from './devices.repository';
import { type PresenceRecord, PresenceRepository } from './presence.repository';

/** A connection a node reports: the device, its client address, since when. */
export interface SeenConnection {
  deviceId: string;
  address: string;
  since: Date;
}

/** A presence older than this is forgotten: the device left (reports come every minute). */
export const PRESENCE_KEPT_MINUTES = 5;
/** Switches are counted over this window for `shared_suspected`. */
const SWITCH_WINDOW_MS = 10 * 60_000;

/** The address as a device list shows it: its last part hidden. */
export function addressHint(address: string): string {
  if (isIPv4(address)) return address.replace(/\.\d+$/, '.x');
  const groups = expandIPv6(address);
  return `${groups.slice(0, 4).map(trimGroup).join(':')}::x`;
}

/** The network an address is in (a /24 or a /64): moving within it is not a switch. */
export function networkOf(address: string): string {
  if (isIPv4(address)) return address.replace(/\.\d+$/, '');
  return expandIPv6(address).slice(0, 4).join(':');
}

function expandIPv6(address: string): string[] {
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = address.includes('::') ? 8 - left.length - right.length : 0;
  return [...left, ...Array<string>(Math.max(0, fill)).fill('0'), ...right].map((group) =>
    group.padStart(4, '0'),
  );
}

const trimGroup = (group: string): string => group.replace(/^0+(?=.)/, '');

/**
 * One network address per device across nodes: each traffic report names the devices connected
 * to the node and their addresses; the newest connection of a device wins, and a node whose
 * connection of it is older is told to close it there (`close` in the report's answer). A
 * device that moves between nodes or networks often is counted (`shared_suspected`).
 */
@Injectable()
export class PresenceService {
  constructor(
    private readonly presence: PresenceRepository,
    private readonly devices: DevicesRepository,
    private readonly metrics: Metrics,
  ) {}

  /** Records what node `nodeId` sees; the devices it should close (newer elsewhere). */
  @Transactional()
  async observe(nodeId: string, seen: SeenConnection[]): Promise<string[]> {
    if (seen.length === 0) return [];
    const newest = new Map<string, SeenConnection>();
    for (const given of seen) {
      // An IPv4 client seen through a dual-stack socket is the same client.
      const connection = { ...given, address: given.address.replace(/^::ffff:(?=[\d.]+$)/i, '') };
      const known = newest.get(connection.deviceId);
      if (!known || connection.since > known.since) newest.set(connection.deviceId, connection);
    }
    const ids = [...newest.keys()].sort();
    const current = new Map<string, PresenceRecord>(
      (await this.presence.lock(ids)).map((row) => [row.deviceId, row]),
    );
    const stale = Date.now() - PRESENCE_KEPT_MINUTES * 60_000;
    const close: string[] = [];
    const saved: { deviceId: string; nodeId: string; address: string; since: Date }[] = [];
    const switched: string[] = [];
    for (const id of ids) {
      const connection = newest.get(id)!;
      const known = current.get(id);
      const live = known !== undefined && known.seenAt.getTime() >= stale;
      if (live && known.since > connection.since && known.nodeId !== nodeId) {
        close.push(id);
        continue;
      }
      if (
        live &&
        (known.nodeId !== nodeId || networkOf(known.address) !== networkOf(connection.address))
      ) {
        switched.push(id);
      }
      saved.push({ deviceId: id, nodeId, address: connection.address, since: connection.since });
    }
    await this.presence.save(saved);
    await this.markDevices(saved, new Set(switched));
    this.metrics.deviceSwitched(switched.length);
    return close;
  }

  private async markDevices(
    saved: { deviceId: string; address: string }[],
    switched: Set<string>,
  ): Promise<void> {
    const counts = new Map(
      (await this.devices.switchesOf(saved.map((row) => row.deviceId))).map((row) => [row.id, row]),
    );
    const now = Date.now();
    const rows = saved.flatMap((row) => {
      const count = counts.get(row.deviceId);
      if (!count) return [];
      const inWindow =
        count.switchesSince !== null && now - count.switchesSince.getTime() < SWITCH_WINDOW_MS;
      let switches = inWindow ? count.switches : 0;
      let since = inWindow ? count.switchesSince : null;
      if (switched.has(row.deviceId)) {
        switches += 1;
        since ??= new Date(now);
      }
      return [
        { id: row.deviceId, addressHint: addressHint(row.address), switches, switchesSince: since },
      ];
    });
    await this.devices.markPresence(rows);
  }
}
