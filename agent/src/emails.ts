/**
 * The core users' emails. The email names the core's counters, so it must say whose bytes they are:
 * a session is `<user id>.<slot>` (slots are reused, so a user's counters stay bounded), a device is
 * `<user id>.d.<device id>` (one per device, 75 characters with UUIDs). Ids never hold a dot.
 */
export type EmailOwner =
  | { userId: string; slot: number; deviceId?: undefined }
  | { userId: string; deviceId: string; slot?: undefined };

/** Ids the agent puts into an email: no dot, no space (the access log's email ends at a space). */
const ID = /^[A-Za-z0-9_-]{1,64}$/;

export function sessionEmail(userId: string, slot: number): string {
  return `${userId}.${slot}`;
}

export function deviceEmail(userId: string, deviceId: string): string {
  return `${userId}.d.${deviceId}`;
}

/** Whether an id from the service can be part of an email the agent can read back. */
export function emailSafeId(id: string): boolean {
  return ID.test(id);
}

/** Whose email this is, or null for an email the agent did not make. */
export function parseEmail(email: string): EmailOwner | null {
  const parts = email.split('.');
  if (parts.length === 2 && parts[0] !== '' && /^\d+$/.test(parts[1])) {
    return { userId: parts[0], slot: Number(parts[1]) };
  }
  if (parts.length === 3 && parts[1] === 'd' && ID.test(parts[0]) && ID.test(parts[2])) {
    return { userId: parts[0], deviceId: parts[2] };
  }
  return null;
}

/** The user id an email names (a session's or a device's), or null. */
export function emailUser(email: string): string | null {
  return parseEmail(email)?.userId ?? null;
}
