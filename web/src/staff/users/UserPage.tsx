/**
 * One account in the console (/staff/users/<id>): its subscription, traffic, blocked state, partner
 * terms, devices and invoices, and what staff may do to it. Every action goes through the service's
 * own route (audited there); the owner-only ones are shown to the owner only.
 */
import {
  Anchor,
  Button,
  Card,
  Group,
  NumberInput,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
  Alert,
} from '@mantine/core';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMe } from '../../api/hooks';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { useNotify } from '../../layout/notify';
import { access } from '../access';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { CursorMore } from '../shared/ListControls';
import { useInvoiceList } from '../payments/queries';
import { useTicketQueue } from '../tickets/queries';
import { BlockedBadge, NewPasswordInput, useAccountName } from './accounts';
import { type StaffUser, type UserChange, userActions, useUser, useUserChange } from './queries';
import { UserDevices } from './UserDevices';

const GIB = 1024 ** 3;

export function UserPage() {
  const { t } = useI18n();
  const { id = '' } = useParams();
  const accountName = useAccountName();
  const user = useUser(id);

  return (
    <Stack>
      <Anchor component={Link} to="/staff/users" size="sm">
        {t('console.users.back')}
      </Anchor>
      {user.isPending && <Loading />}
      {user.isError && <Failed error={user.error} retry={() => void user.refetch()} />}
      {user.data && (
        <>
          <Title order={2}>
            {t('console.users.accountTitle', { name: accountName(user.data) })}
          </Title>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <AccountFacts user={user.data} />
            <SubscriptionFacts user={user.data} />
          </SimpleGrid>
          <UserActions user={user.data} />
          <UserDevices userId={user.data.id} account={accountName(user.data)} />
          <Invoices userId={user.data.id} />
          <Tickets userId={user.data.id} />
        </>
      )}
    </Stack>
  );
}

/**
 * A titled section the tests and screen readers find by its name. Not layout/DataTable's
 * `Section`: that one is an h2, and here the sections sit under the account's own h2.
 */
function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <Card withBorder component="section" role="region" aria-labelledby={id}>
      <Title order={3} id={id} mb="xs">
        {title}
      </Title>
      {children}
    </Card>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Group gap="xs" wrap="nowrap" align="baseline">
      <Text size="sm" fw={600} style={{ flexShrink: 0 }}>
        {label}
      </Text>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </Group>
  );
}

function AccountFacts({ user }: { user: StaffUser }) {
  const { t, date } = useI18n();
  return (
    <Section id="user-account" title={t('console.users.accountSection')}>
      <Stack gap={4}>
        <Fact label={t('console.users.id')}>{user.id}</Fact>
        <Fact label={t('console.users.role')}>
          {t(`console.users.role.${user.role ?? 'none'}`)}
        </Fact>
        {user.username && <Fact label={t('console.users.username')}>{user.username}</Fact>}
        {user.tg_id !== null && <Fact label={t('console.users.tgId')}>{user.tg_id}</Fact>}
        <Fact label={t('console.users.createdAt')}>{date(user.created_at)}</Fact>
        <Fact label={t('console.users.state')}>
          <BlockedBadge user={user} />
        </Fact>
        {user.role === 'partner' && (
          <>
            <Fact label={t('console.users.partnerCode')}>{user.partner_code ?? '-'}</Fact>
            <Fact label={t('console.users.commission')}>
              {user.commission_percent === null ? '-' : `${user.commission_percent}%`}
            </Fact>
          </>
        )}
        {user.role === 'moderator' && (
          <Fact label={t('console.users.nodeAccess')}>
            {t(user.can_manage_nodes ? 'console.users.yes' : 'console.users.no')}
          </Fact>
        )}
      </Stack>
    </Section>
  );
}

function SubscriptionFacts({ user }: { user: StaffUser }) {
  const { t, date, bytes } = useI18n();
  const subscription = user.subscription;
  return (
    <Section id="user-subscription" title={t('console.users.subscription')}>
      <Stack gap={4}>
        {subscription ? (
          <>
            <Fact label={t('console.users.plan')}>{subscription.plan_name}</Fact>
            <Fact label={t('console.users.ends')}>
              {subscription.waiting_first_use
                ? t('console.users.waitingFirstUse')
                : t(subscription.active ? 'console.users.runsUntil' : 'console.users.endedOn', {
                    date: date(subscription.expires_at),
                  })}
            </Fact>
          </>
        ) : (
          <Text size="sm">{t('console.users.noSubscription')}</Text>
        )}
        <Fact label={t('console.users.traffic')}>
          {t('console.users.usedOf', {
            used: bytes(user.traffic.used_bytes),
            limit: bytes(user.traffic.limit_bytes),
          })}
        </Fact>
      </Stack>
    </Section>
  );
}

function Invoices({ userId }: { userId: string }) {
  const { t, date, money } = useI18n();
  const invoices = useInvoiceList({ user_id: userId });
  const items = invoices.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Section id="user-invoices" title={t('console.users.invoices')}>
      {invoices.isPending && <Loading />}
      {invoices.isError && <Failed error={invoices.error} retry={() => void invoices.refetch()} />}
      {invoices.isSuccess && (
        <DataTable
          minWidth={520}
          rows={items}
          rowKey={(invoice) => invoice.id}
          columns={[
            { header: t('console.users.invoiceDate'), cell: (invoice) => date(invoice.created_at) },
            { header: t('console.users.plan'), cell: (invoice) => invoice.plan_name },
            {
              header: t('console.users.amount'),
              cell: (invoice) =>
                money(invoice.amount, invoice.provider === 'ton' ? 'TON' : invoice.currency),
            },
            {
              header: t('console.users.invoiceStatus'),
              cell: (invoice) => t(`status.${invoice.status}`),
            },
          ]}
        />
      )}
      <CursorMore list={invoices} />
    </Section>
  );
}

/** The account's support tickets, open or closed, each linking to its thread in the console. */
function Tickets({ userId }: { userId: string }) {
  const { t, date } = useI18n();
  const [status, setStatus] = useState<'open' | 'closed'>('open');
  const tickets = useTicketQueue({ user_id: userId, status });
  const items = tickets.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Section id="user-tickets" title={t('console.users.tickets')}>
      <SegmentedControl
        mb="sm"
        aria-label={t('console.users.ticketStatus')}
        value={status}
        onChange={(value) => setStatus(value as 'open' | 'closed')}
        data={[
          { value: 'open', label: t('status.open') },
          { value: 'closed', label: t('status.closed') },
        ]}
      />
      {tickets.isPending && <Loading />}
      {tickets.isError && <Failed error={tickets.error} retry={() => void tickets.refetch()} />}
      {tickets.isSuccess && (
        <DataTable
          rows={items}
          rowKey={(ticket) => ticket.id}
          columns={[
            {
              header: t('console.users.ticketSubject'),
              cell: (ticket) => (
                <Anchor component={Link} to={`/staff/tickets/${ticket.id}`}>
                  {ticket.subject}
                </Anchor>
              ),
            },
            {
              header: t('console.users.ticketLastMessage'),
              cell: (ticket) => date(ticket.last_message_at),
            },
          ]}
        />
      )}
      <CursorMore list={tickets} />
    </Section>
  );
}

function UserActions({ user }: { user: StaffUser }) {
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

function ReasonField({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const { t } = useI18n();
  return (
    <Textarea
      label={t('console.users.reason')}
      description={t('console.users.reasonHint')}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      required
      maxLength={200}
      autosize
      minRows={2}
    />
  );
}

/** Adds days to the subscription (or takes them away), with the reason kept in the audit log. */
function MoveSubscription({ user, change }: { user: StaffUser; change: UserChange }) {
  const { t, errorText } = useI18n();
  const [days, setDays] = useState<string | number>(30);
  const [planName, setPlanName] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = user.subscription?.active ?? false;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await change(() =>
        userActions(user.id).moveSubscription({
          days: Number(days),
          reason,
          ...(!running && planName.trim() !== '' ? { plan_name: planName.trim() } : {}),
        }),
      );
      setReason('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} aria-labelledby="move-subscription">
      <Stack gap="xs" maw={640}>
        <Title order={4} id="move-subscription">
          {t('console.users.moveTitle')}
        </Title>
        <Group align="flex-start" grow>
          <NumberInput
            label={t('console.users.days')}
            description={t('console.users.daysHint')}
            value={days}
            onChange={setDays}
            min={-3650}
            max={3650}
            allowDecimal={false}
            required
          />
          {!running && (
            <TextInput
              label={t('console.users.planName')}
              description={t('console.users.planNameHint')}
              value={planName}
              onChange={(e) => setPlanName(e.currentTarget.value)}
              maxLength={32}
            />
          )}
        </Group>
        <ReasonField value={reason} onChange={setReason} />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Button type="submit" loading={busy} w="fit-content">
          {t('console.users.moveSubmit')}
        </Button>
      </Stack>
    </form>
  );
}

/** The account's own traffic limit in GB, or back to the default one. */
function TrafficLimit({ user, change }: { user: StaffUser; change: UserChange }) {
  const { t, errorText } = useI18n();
  const [gigabytes, setGigabytes] = useState<string | number>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function save(limit: number | null) {
    setBusy(true);
    setError(null);
    try {
      await change(() => userActions(user.id).setTrafficLimit(limit));
      setGigabytes('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void save(gigabytes === '' ? null : Math.round(Number(gigabytes) * GIB));
  }

  return (
    <form onSubmit={submit} aria-labelledby="traffic-limit">
      <Stack gap="xs">
        <Title order={4} id="traffic-limit">
          {t('console.users.limitTitle')}
        </Title>
        <Group align="flex-end">
          <NumberInput
            label={t('console.users.limitGb')}
            value={gigabytes}
            onChange={setGigabytes}
            min={0.01}
            decimalScale={2}
            required
          />
          <Button type="submit" loading={busy}>
            {t('console.users.limitSave')}
          </Button>
          <Button variant="default" disabled={busy} onClick={() => void save(null)}>
            {t('console.users.limitDefault')}
          </Button>
        </Group>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
      </Stack>
    </form>
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
