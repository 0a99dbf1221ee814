/** The audit actions of devices. */
export const DEVICE_AUDIT_ACTIONS = {
  removed: 'user.device_removed',
} as const;

/** A device's moves between nodes or networks are counted over this window (`shared_suspected`). */
export const SWITCH_WINDOW_MS = 10 * 60_000;
