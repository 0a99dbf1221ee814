import { isIPv4 } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { Metrics } from '../metrics/metrics.service';
import { SWITCH_WINDOW_MS } from './devices.constants';
import { type DeviceMarks, DevicesRepository } from './devices.repository';
import { type PresenceRecord, PresenceRepository } from './presence.repository';

/** A connection a node reports: the device, its client address, since when. */
export interface SeenConnection {
  deviceId: string;
  address: string;
  since: Date;
}

/** A presence older than this is forgotten: the device left (reports come every minute). */
export const PRESENCE_KEPT_MINUTES = 5;
/**
 * A connection reported again unchanged is written again once its record is this old, so that it
 * stays well within PRESENCE_KEPT_MINUTES without a write for every report of every device.
 */
const PRESENCE_REFRESH_MS = 2 * 60_000;
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

  /**
   * Records what node `nodeId` sees; the devices it should close (newer elsewhere). Only what
   * changed is written: a connection reported again as it was is written again once its record is
   * PRESENCE_REFRESH_MS old, a device's marks when they differ.
   */
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
    const now = Date.now();
    const close: string[] = [];
    const saved: { deviceId: string; nodeId: string; address: string; since: Date }[] = [];
    const marks: DeviceMarks[] = [];
    let switches = 0;
    const devices = await this.devices.lockPresenceMarks([...newest.keys()].sort());
    const recorded = new Map(
      (await this.presence.connectionsOf(devices.map((device) => device.id))).map((row) => [
        row.deviceId,
        row,
      ]),
    );
    for (const device of devices) {
      const connection = newest.get(device.id)!;
      const known = liveConnection(recorded.get(device.id), now);
      if (known && known.since > connection.since && known.nodeId !== nodeId) {
        close.push(device.id);
        continue;
      }
      const switched =
        known !== null &&
        (known.nodeId !== nodeId || networkOf(known.address) !== networkOf(connection.address));
      if (switched) switches++;
      const unchanged =
        known !== null &&
        known.nodeId === nodeId &&
        known.address === connection.address &&
        known.since.getTime() === connection.since.getTime() &&
        now - known.seenAt.getTime() < PRESENCE_REFRESH_MS;
      if (!unchanged) saved.push({ ...connection, nodeId });
      const mark = marksOf(device, connection.address, switched, now);
      if (mark) marks.push(mark);
    }
    await this.presence.save(saved);
    await this.devices.markPresence(marks);
    this.metrics.deviceSwitched(switches);
    return close;
  }
}

/** The recorded connection while it counts (seen within PRESENCE_KEPT_MINUTES); else null. */
function liveConnection(record: PresenceRecord | undefined, now: number): PresenceRecord | null {
  if (!record || record.seenAt.getTime() < now - PRESENCE_KEPT_MINUTES * 60_000) return null;
  return record;
}

/** The device's marks after this connection, or null when they stay as they are. */
function marksOf(
  device: DeviceMarks,
  address: string,
  switched: boolean,
  now: number,
): DeviceMarks | null {
  const inWindow =
    device.switchesSince !== null && now - device.switchesSince.getTime() < SWITCH_WINDOW_MS;
  let switches = inWindow ? device.switches : 0;
  let since = inWindow ? device.switchesSince : null;
  if (switched) {
    switches += 1;
    since ??= new Date(now);
  }
  const hint = addressHint(address);
  if (
    hint === device.addressHint &&
    switches === device.switches &&
    since?.getTime() === device.switchesSince?.getTime()
  ) {
    return null;
  }
  return { id: device.id, addressHint: hint, switches, switchesSince: since };
}
