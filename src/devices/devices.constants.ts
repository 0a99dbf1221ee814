/** The audit actions of devices. */
export const DEVICE_AUDIT_ACTIONS = {
  removed: 'user.device_removed',
} as const;
