import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Progress,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import type { Invoice, InvoiceStatus, User } from '../api/client';
import { useAttachPartner, useInvoices, useMe, useStartTrial } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { DataTable, Section } from '../layout/DataTable';
import { Failed, Loading } from '../layout/Loading';
import { useNotify } from '../layout/notify';
import { InvoiceDialog, invoiceExpiry } from '../plans/InvoiceDialog';
import { ConnectSection } from './ConnectSection';

const DAY_MS = 86_400_000;

export const STATUS_COLOR: Record<string, string> = {
  pending: 'yellow',
  paid: 'green',
  expired: 'gray',
  approved: 'blue',
  rejected: 'red',
  open: 'green',
  closed: 'gray',
};

export function AccountPage() {
  const { t } = useI18n();
  const me = useMe();
  if (me.isPending) return <Loading />;
  if (me.isError) return <Failed error={me.error} retry={() => void me.refetch()} />;
  const user = me.data;
  if (!user) return null;
  return (
    <Stack maw={720}>
      <Title order={1}>{t('account.title')}</Title>
      <Text size="sm">
        {user.tg_id !== null ? t('account.telegram') : t('account.anonymous')} · {t('account.id')}{' '}
        {user.id}
      </Text>
      <SubscriptionCard user={user} />
      <TrafficCard user={user} />
      <ConnectSection />
      <PartnerCard user={user} />
      <InvoicesCard />
    </Stack>
  );
}

function SubscriptionCard({ user }: { user: User }) {
  const { t, date, errorText } = useI18n();
  const trial = useStartTrial();
  const notify = useNotify();
  const sub = user.subscription;
  const daysLeft = sub
    ? Math.max(0, Math.ceil((Date.parse(sub.expires_at) - Date.now()) / DAY_MS))
    : 0;
  return (
    <Card withBorder component="section" aria-labelledby="subscription-title">
      <Stack gap="xs">
        <Title order={2} size="h3" id="subscription-title">
          {t('account.subscription')}
        </Title>
        {sub ? (
          <>
            <Group>
              <Text>
                {t('account.plan')}: <strong>{sub.plan_name}</strong>
              </Text>
              <Badge
                variant="dot"
                color={sub.active ? 'green' : sub.waiting_first_use ? 'yellow' : 'gray'}
              >
                {sub.active
                  ? t('account.active')
                  : sub.waiting_first_use
                    ? t('account.waiting')
                    : t('account.expired')}
              </Badge>
            </Group>
            {sub.waiting_first_use ? (
              <Text>{t('account.waitingNote')}</Text>
            ) : (
              <Text>
                {t('account.ends')}: <time dateTime={sub.expires_at}>{date(sub.expires_at)}</time>
                {sub.active && ` · ${t('account.daysLeft', { days: daysLeft })}`}
              </Text>
            )}
          </>
        ) : (
          <Text>{t('account.noSubscription')}</Text>
        )}
        <Group>
          <Button component={Link} to="/plans" variant="light">
            {t('account.buy')}
          </Button>
          {user.tg_id !== null && !sub && (
            <Button
              loading={trial.isPending}
              onClick={() =>
                trial.mutate(undefined, {
                  onSuccess: () => notify(t('account.trialStarted')),
                })
              }
            >
              {t('account.trial')}
            </Button>
          )}
        </Group>
        {trial.isError && (
          <Alert color="red" role="alert">
            {errorText(trial.error)}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}

function TrafficCard({ user }: { user: User }) {
  const { t, bytes, date } = useI18n();
  const { limit_bytes: limit, used_bytes: used } = user.traffic;
  const percent = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
  return (
    <Card withBorder component="section" aria-labelledby="traffic-title">
      <Stack gap="xs">
        <Title order={2} size="h3" id="traffic-title">
          {t('account.traffic')}
        </Title>
        <Progress
          value={percent}
          color={percent >= 90 ? 'red' : 'indigo'}
          size="lg"
          aria-label={t('account.trafficBar')}
        />
        <Text>{t('account.trafficUsed', { used: bytes(used), limit: bytes(limit) })}</Text>
        {user.traffic.resets_at && (
          <Text>
            <time dateTime={user.traffic.resets_at}>
              {t('account.resetsAt', { date: date(user.traffic.resets_at) })}
            </time>
          </Text>
        )}
      </Stack>
    </Card>
  );
}

function PartnerCard({ user }: { user: User }) {
  const { t, errorText } = useI18n();
  const attach = useAttachPartner();
  const notify = useNotify();
  const [code, setCode] = useState('');
  if (user.role === 'partner') return null;
  function submit(event: FormEvent) {
    event.preventDefault();
    // Optional: an empty field sends nothing (the button is disabled then).
    if (!code.trim()) return;
    attach.mutate(
      { partner_code: code.trim() },
      {
        onSuccess: () => {
          setCode('');
          notify(t('account.partnerAttached'));
        },
      },
    );
  }
  return (
    <Card withBorder component="section" aria-labelledby="partner-title">
      <form onSubmit={submit}>
        <Stack gap="xs">
          <Title order={2} size="h3" id="partner-title">
            {t('account.partner')}
          </Title>
          <Group align="flex-end">
            <TextInput
              label={t('account.partner')}
              description={t('account.partnerHint')}
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              maxLength={64}
            />
            <Button
              type="submit"
              variant="light"
              loading={attach.isPending}
              disabled={!code.trim()}
            >
              {t('account.partnerAttach')}
            </Button>
          </Group>
          {attach.isError && (
            <Alert color="red" role="alert">
              {errorText(attach.error)}
            </Alert>
          )}
        </Stack>
      </form>
    </Card>
  );
}

function InvoicesCard() {
  const { t, money, date } = useI18n();
  const invoices = useInvoices();
  const [open, setOpen] = useState<Invoice | null>(null);
  return (
    <Section title={t('account.invoices')}>
      <InvoiceDialog invoice={open} onClose={() => setOpen(null)} />
      {invoices.isPending && <Loading />}
      {invoices.isError && <Failed error={invoices.error} retry={() => void invoices.refetch()} />}
      {invoices.data && (
        <DataTable
          rows={invoices.data.items}
          rowKey={(invoice) => invoice.id}
          columns={[
            { header: t('account.invoiceDate'), cell: (invoice) => date(invoice.created_at) },
            { header: t('account.invoicePlan'), cell: (invoice) => invoice.plan_name },
            {
              header: t('account.invoiceAmount'),
              cell: (invoice) =>
                money(invoice.amount, invoice.provider === 'ton' ? 'TON' : invoice.currency),
            },
            {
              header: t('account.invoiceStatus'),
              cell: (invoice) => <StatusBadge status={invoice.status} />,
            },
            {
              header: t('account.invoicePay'),
              cell: (invoice) =>
                invoice.status === 'pending' && invoiceExpiry(invoice).getTime() > Date.now() ? (
                  <Button
                    size="compact-sm"
                    variant="light"
                    onClick={() => setOpen(invoice)}
                    aria-label={t('account.invoiceOpen', {
                      plan: invoice.plan_name,
                      date: date(invoice.created_at),
                    })}
                  >
                    {t('account.invoicePayButton')}
                  </Button>
                ) : null,
            },
          ]}
        />
      )}
    </Section>
  );
}

export function StatusBadge({ status }: { status: InvoiceStatus | string }) {
  const { t } = useI18n();
  const key = `status.${status}` as Parameters<typeof t>[0];
  return (
    <Badge variant="dot" color={STATUS_COLOR[status] ?? 'gray'}>
      {t(key)}
    </Badge>
  );
}
