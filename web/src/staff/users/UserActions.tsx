/**
 * What staff may do to an account from its page: its subscription and traffic, blocking, and for
 * the owner a moderator's node access and a staff account's password.
 */
import { Alert, Group, Stack, Switch } from '@mantine/core';
import { useState } from 'react';
import { useMe } from '../../api/hooks';
import { useI18n } from '../../i18n/i18n';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { useNotify } from '../../layout/notify';
import { access } from '../access';
import { NewPasswordInput, useAccountName } from './accounts';
import { ReasonField, Section } from './parts';
import { type StaffUser, type UserChange, userActions, useUserChange } from './queries';
import { MoveSubscription, TrafficLimit } from './SubscriptionForms';

export function UserActions({ user }: { user: StaffUser }) {
  const { t } = useI18n();
  const me = useMe().data;
  const isOwner = me ? access.owner(me) : false;
  const isStaffAccount = user.role !== null;
  const name = useAccountName()(user);
  const change = useUserChange(user.id);
  const actions = userActions(user.id);
  const [resetReason, setResetReason] = useState('');
  const [blockReason, setBlockReason] = useState('');

  // Staff accounts are the owner's to block; the owner's own account is nobody's.
  const mayBlock = (!isStaffAccount || isOwner) && user.role !== 'owner';

  return (
    <Section id="user-actions" title={t('console.users.actions')}>
      <Stack>
        <MoveSubscription user={user} change={change} />
        <TrafficLimit user={user} change={change} />
        <Group>
          <ConfirmAction
            label={t('console.users.resetTraffic')}
            question={t('console.users.resetQuestion', { name })}
            action={async () => {
              await change(() => actions.resetTraffic(resetReason));
              setResetReason('');
            }}
          >
            <ReasonField value={resetReason} onChange={setResetReason} />
          </ConfirmAction>
          {mayBlock && !user.blocked_at && (
            <ConfirmAction
              label={t('console.users.block')}
              question={t('console.users.blockQuestion', { name })}
              action={async () => {
                await change(() => actions.block(blockReason));
                setBlockReason('');
              }}
            >
              <ReasonField value={blockReason} onChange={setBlockReason} />
            </ConfirmAction>
          )}
          {mayBlock && user.blocked_at && (
            <ConfirmAction
              color="blue"
              label={t('console.users.unblock')}
              question={t('console.users.unblockQuestion', { name })}
              action={() => change(actions.unblock)}
            />
          )}
        </Group>
        {isOwner && user.role === 'moderator' && <NodeAccess user={user} change={change} />}
        {isOwner && isStaffAccount && <StaffPassword user={user} name={name} />}
      </Stack>
    </Section>
  );
}

/** Whether a moderator may manage nodes (the owner's to say). */
function NodeAccess({ user, change }: { user: StaffUser; change: UserChange }) {
  const { t, errorText } = useI18n();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function toggle(next: boolean) {
    setBusy(true);
    setError(null);
    try {
      await change(() => userActions(user.id).setNodeAccess(next));
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Stack gap="xs">
      <Switch
        label={t('console.users.nodeAccessSwitch')}
        checked={user.can_manage_nodes}
        disabled={busy}
        onChange={(e) => void toggle(e.currentTarget.checked)}
      />
      {error && (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      )}
    </Stack>
  );
}

/** A staff account's new password (the owner's); every session of that account ends. */
function StaffPassword({ user, name }: { user: StaffUser; name: string }) {
  const { t } = useI18n();
  const notify = useNotify();
  const [password, setPassword] = useState('');
  return (
    <Group>
      <ConfirmAction
        label={t('console.users.setPassword')}
        question={t('console.users.passwordQuestion', { name })}
        action={async () => {
          await userActions(user.id).setPassword(password);
          setPassword('');
          notify(t('console.users.passwordSet', { name }), 'green');
        }}
      >
        <NewPasswordInput value={password} onChange={setPassword} />
      </ConfirmAction>
    </Group>
  );
}
