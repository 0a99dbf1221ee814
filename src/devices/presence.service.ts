import { isIPv4 } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { Metrics } from '../metrics/metrics.service';
import { SWITCH_WINDOW_MS } from './devices.constants';
import type { Uuid } from '../common/uuid';
import { DevicesRepository, type LockedDevice, type LockedMarks } from './devices.repository';
import { type PresenceRecord, PresenceRepository } from './presence.repository';

/** A connection a node reports: the device, its client address, since when. */
export interface SeenConnection {
  deviceId: Uuid;
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
   * Records what the nodes of a batch of traffic reports see, report after report, in the
   * caller's transaction, which has locked the devices' rows (`lockAndCountDevicesCtes`,
   * its rows, with their connections as of their locks, given as `locked`; devices not among them
   * do not exist and are left out). For each sighting, the devices its node should close (newer
   * elsewhere, ascending ids). Only what changed is written, once per device: a connection reported
   * again as it was is written again once its record is PRESENCE_REFRESH_MS old, a device's marks
   * when they differ. The writes are answered with the transaction's next query (its COMMIT, in
   * the batch), which fails should they (`writtenAhead`).
   */
  @Transactional()
  async observeAll(sightings: NodeSighting[], locked: LockedDevice[]): Promise<string[][]> {
    const marks = new Map<string, LockedMarks>();
    const recorded = new Map<string, PresenceRecord>();
    for (const { id, addressHint, switches, switchesSince, connection } of locked) {
      marks.set(id, { id, addressHint, switches, switchesSince });
      if (connection) recorded.set(id, connection);
    }
    const now = Date.now();
    const saved = new Map<string, SeenConnection & { nodeId: Uuid; seenAt: Date }>();
    let switches = 0;
    const closes = sightings.map(({ nodeId, online }) => {
      const close: string[] = [];
      for (const connection of newestOf(online)) {
        const id = connection.deviceId;
        const device = marks.get(id);
        if (!device) continue;
        const known = liveConnection(recorded.get(id), now);
        if (known && known.since > connection.since && known.nodeId !== nodeId) {
          close.push(id);
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
        if (!unchanged) {
          const record = { ...connection, nodeId, seenAt: new Date(now) };
          recorded.set(id, record);
          saved.set(id, record);
        }
        marks.set(id, marksAfter(device, connection.address, switched, now));
      }
      return close;
    });
    // In ascending ids, as the devices' rows were locked.
    await this.presence.save([...saved.keys()].sort().map((id) => saved.get(id)!));
    const changed = locked.flatMap((before) => {
      const after = marks.get(before.id)!;
      return sameMarks(before, after) ? [] : [after];
    });
    await this.devices.markPresence(changed);
    this.metrics.deviceSwitched(switches);
    return closes;
  }
}

/** What one traffic report says of the connections on its node. */
export interface NodeSighting {
  nodeId: Uuid;
  online: SeenConnection[];
}

/** An IPv4 address as a dual-stack socket writes it: its prefix. */
const DUAL_STACK_IPV4 = /^::ffff:(?=[\d.]+$)/i;

/** Each device's newest connection of `online`, in ascending device ids. */
function newestOf(online: SeenConnection[]): SeenConnection[] {
  const newest = new Map<string, SeenConnection>();
  for (const given of online) {
    // An IPv4 client seen through a dual-stack socket is the same client.
    const address = given.address.replace(DUAL_STACK_IPV4, '');
    const connection = address === given.address ? given : { ...given, address };
    const known = newest.get(connection.deviceId);
    if (!known || connection.since > known.since) newest.set(connection.deviceId, connection);
  }
  return [...newest.keys()].sort().map((id) => newest.get(id)!);
}

/** The recorded connection while it counts (seen within PRESENCE_KEPT_MINUTES); else null. */
function liveConnection(record: PresenceRecord | undefined, now: number): PresenceRecord | null {
  if (!record || record.seenAt.getTime() < now - PRESENCE_KEPT_MINUTES * 60_000) return null;
  return record;
}

/** The device's marks after this connection. */
function marksAfter(
  device: LockedMarks,
  address: string,
  switched: boolean,
  now: number,
): LockedMarks {
  const inWindow =
    device.switchesSince !== null && now - device.switchesSince.getTime() < SWITCH_WINDOW_MS;
  let switches = inWindow ? device.switches : 0;
  let since = inWindow ? device.switchesSince : null;
  if (switched) {
    switches += 1;
    since ??= new Date(now);
  }
  return { id: device.id, addressHint: addressHint(address), switches, switchesSince: since };
}

function sameMarks(a: LockedMarks, b: LockedMarks): boolean {
  return (
    a.addressHint === b.addressHint &&
    a.switches === b.switches &&
    a.switchesSince?.getTime() === b.switchesSince?.getTime()
  );
}
