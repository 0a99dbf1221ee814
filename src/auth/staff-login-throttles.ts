/**
 * The throttles of staff sign-in (`POST /auth/admin/login`), limits in RATE_STAFF_LOGIN_*. The
 * strict limit is per client address and username, so a stranger who guesses at `owner` cannot
 * lock the owner out from elsewhere; a looser ceiling per username, whatever the address, slows a
 * guess spread over many addresses; and one per address slows a sweep of usernames. A device that
 * signed in as that username before (its device cookie) counts against itself instead, under each
 * of the three: guesses from elsewhere, however many addresses they come from, never block it; nor
 * does the count per address, which a neighbour behind the same address (or NAT) fills. IPv6
 * clients count by their /64. Behind a reverse proxy set TRUST_PROXY to the hops or the proxies'
 * addresses, or every client shares one address.
 */
import { Injectable } from '@nestjs/common';
import type { AuthenticatedRequest } from './guards/auth-user';
import { throttleAddress } from '../common/throttling/client-address';
import type { RateRule, RequestTracker } from '../common/throttling/rate-limit.guard';
import { StaffDevices } from './staff-devices';

/** The username a sign-in names, as it is looked up; a bounded key whatever the client sends. */
function usernameOf(request: AuthenticatedRequest): string {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' ? username.toLowerCase().slice(0, 64) : '';
}

/** The request's known device for the username it names, else what `others` counts by. */
@Injectable()
abstract class DeviceOr implements RequestTracker {
  constructor(private readonly devices: StaffDevices) {}

  keyOf(request: AuthenticatedRequest): string | null {
    const username = usernameOf(request);
    const cookies = request.cookies as Record<string, unknown> | undefined;
    const device = this.devices.deviceOf(cookies, username);
    return device ? `device:${device}` : this.others(request, username);
  }

  protected abstract others(request: AuthenticatedRequest, username: string): string | null;
}

@Injectable()
export class StaffLoginAddress extends DeviceOr {
  protected others(request: AuthenticatedRequest): string | null {
    return throttleAddress(request.ip);
  }
}

@Injectable()
export class StaffLoginAddressAndUsername extends DeviceOr {
  protected others(request: AuthenticatedRequest, username: string): string | null {
    const address = throttleAddress(request.ip);
    return address === null ? null : `${address}|${username}`;
  }
}

@Injectable()
export class StaffLoginUsername extends DeviceOr {
  protected others(_request: AuthenticatedRequest, username: string): string {
    return username;
  }
}

export const STAFF_LOGIN_TRACKERS = [
  StaffLoginAddress,
  StaffLoginAddressAndUsername,
  StaffLoginUsername,
];

export const STAFF_LOGIN: RateRule[] = [
  { name: 'staff-login', limit: 'staffLoginPerAddress', by: StaffLoginAddress },
  {
    name: 'staff-login',
    limit: 'staffLoginPerAddressAndUsername',
    by: StaffLoginAddressAndUsername,
  },
  { name: 'staff-login', limit: 'staffLoginPerUsername', by: StaffLoginUsername },
];
