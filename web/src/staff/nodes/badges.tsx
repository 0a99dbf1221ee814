/**
 * A node's health and provisioning state as badges, in words: dark text beside a coloured dot (the
 * light badges' green text is under a 4.5:1 contrast).
 */
import { Badge } from '@mantine/core';
import { useI18n } from '../../i18n/i18n';
import type { Node } from './queries';

const STATUS_COLORS: Record<Node['status'], string> = {
  online: 'green',
  offline: 'red',
  unknown: 'gray',
};
const PROVISION_COLORS: Record<Node['provision_state'], string> = {
  new: 'gray',
  provisioning: 'blue',
  ready: 'green',
  failed: 'red',
};

export function StatusBadge({ status }: { status: Node['status'] }) {
  const { t } = useI18n();
  return (
    <Badge
      color={STATUS_COLORS[status]}
      variant="dot"
      style={{ flexShrink: 0, overflow: 'visible' }}
    >
      {t(`console.nodes.status.${status}`)}
    </Badge>
  );
}

export function ProvisionBadge({ state }: { state: Node['provision_state'] }) {
  const { t } = useI18n();
  return (
    <Badge
      color={PROVISION_COLORS[state]}
      variant="dot"
      style={{ flexShrink: 0, overflow: 'visible' }}
    >
      {t(`console.nodes.provision.${state}`)}
    </Badge>
  );
}
