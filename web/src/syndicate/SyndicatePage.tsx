import { Alert, Button, Card, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { StatusBadge } from '../account/AccountPage';
import { useConfig, useEarnings, useMe, useRequestWithdrawal, useWithdrawals } from '../api/hooks';
import { decimalToMinor, useI18n } from '../i18n/i18n';
import { CopyField } from '../layout/CopyField';
import { DataTable, Section } from '../layout/DataTable';
import { Failed, Loading } from '../layout/Loading';
import { useNotify } from '../layout/notify';
import { partnerShareLinks } from './partner-link';

export function SyndicatePage() {
  const { t, money, date } = useI18n();
  const me = useMe();
  const partner = me.data?.role === 'partner';
  const earnings = useEarnings(partner);
  const withdrawals = useWithdrawals(partner);

  if (!partner) {
    return (
      <Stack>
        <Title order={1}>{t('syndicate.title')}</Title>
        <Text>{t('syndicate.notPartner')}</Text>
      </Stack>
    );
  }
  if (earnings.isPending) return <Loading />;
  if (earnings.isError)
    return <Failed error={earnings.error} retry={() => void earnings.refetch()} />;
  const data = earnings.data;
  return (
    <Stack maw={820}>
      <Title order={1}>{t('syndicate.title')}</Title>
      <Text>
        {t('syndicate.code', {
          code: data.partner_code ?? '-',
          percent: data.commission_percent ?? 0,
        })}
      </Text>
      {data.partner_code && <ShareLinks code={data.partner_code} />}
      <Section title={t('syndicate.balances')}>
        <DataTable
          rows={data.balances}
          rowKey={(b) => b.currency}
          columns={[
            { header: t('syndicate.currency'), cell: (b) => b.currency },
            { header: t('syndicate.earned'), cell: (b) => money(b.earned, b.currency) },
            { header: t('syndicate.requested'), cell: (b) => money(b.requested, b.currency) },
            { header: t('syndicate.paidOut'), cell: (b) => money(b.paid, b.currency) },
            { header: t('syndicate.available'), cell: (b) => money(b.available, b.currency) },
          ]}
        />
      </Section>
      <Section title={t('syndicate.recent')}>
        <DataTable
          rows={data.recent}
          rowKey={(c) => c.id}
          columns={[
            { header: t('syndicate.date'), cell: (c) => date(c.created_at) },
            { header: t('syndicate.plan'), cell: (c) => c.plan_name },
            { header: t('syndicate.price'), cell: (c) => money(c.price_minor, c.currency) },
            {
              header: t('syndicate.commission'),
              cell: (c) => `${money(c.amount, c.currency)} (${c.percent}%)`,
            },
          ]}
        />
      </Section>
      <WithdrawalForm currencies={data.balances.map((b) => b.currency)} />
      <Section title={t('syndicate.withdrawals')}>
        {withdrawals.isPending && <Loading />}
        {withdrawals.isError && <Failed error={withdrawals.error} />}
        {withdrawals.data && (
          <DataTable
            rows={withdrawals.data.items}
            rowKey={(w) => w.id}
            columns={[
              { header: t('syndicate.date'), cell: (w) => date(w.created_at) },
              { header: t('syndicate.amount'), cell: (w) => money(w.amount, w.currency) },
              { header: t('syndicate.destination'), cell: (w) => w.destination, breakAll: true },
              { header: t('syndicate.status'), cell: (w) => <StatusBadge status={w.status} /> },
            ]}
          />
        )}
      </Section>
    </Stack>
  );
}

/** The links a partner hands out: whoever signs up through one is attached to the partner. */
function ShareLinks({ code }: { code: string }) {
  const { t } = useI18n();
  const config = useConfig();
  const links = partnerShareLinks(code, config.data?.bot_username, window.location.origin);
  return (
    <Section title={t('syndicate.share')}>
      <Stack gap="sm">
        <Text size="sm">{t('syndicate.shareHint')}</Text>
        {links.bot && (
          <CopyField
            label={t('syndicate.botLink')}
            shown={links.bot}
            copy={links.bot}
            copyWhat={t('syndicate.copyBotLink')}
          />
        )}
        <CopyField
          label={t('syndicate.webLink')}
          shown={links.web}
          copy={links.web}
          copyWhat={t('syndicate.copyWebLink')}
        />
      </Stack>
    </Section>
  );
}

function WithdrawalForm({ currencies }: { currencies: string[] }) {
  const { t, errorText } = useI18n();
  const request = useRequestWithdrawal();
  const notify = useNotify();
  const [currency, setCurrency] = useState<string | null>(currencies[0] ?? null);
  const [amount, setAmount] = useState('');
  const [destination, setDestination] = useState('');
  const minor = currency ? decimalToMinor(amount, currency) : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!currency || !minor) return;
    request.mutate(
      { amount: minor, currency, destination: destination.trim() },
      {
        onSuccess: () => {
          setAmount('');
          notify(t('syndicate.requestedOk'));
        },
      },
    );
  }

  if (currencies.length === 0) return null;
  return (
    <Card withBorder component="section" aria-labelledby="request-title">
      <form onSubmit={submit}>
        <Stack gap="xs">
          <Title order={2} size="h3" id="request-title">
            {t('syndicate.request')}
          </Title>
          <Group align="flex-start" grow preventGrowOverflow={false} wrap="wrap">
            <Select
              label={t('syndicate.currency')}
              data={currencies}
              value={currency}
              onChange={setCurrency}
              allowDeselect={false}
            />
            <TextInput
              label={t('syndicate.amount')}
              value={amount}
              onChange={(e) => setAmount(e.currentTarget.value)}
              inputMode="decimal"
              required
              error={amount !== '' && !minor ? t('error.VALIDATION_FAILED') : undefined}
            />
          </Group>
          <TextInput
            label={t('syndicate.destination')}
            description={t('syndicate.destinationHint')}
            value={destination}
            onChange={(e) => setDestination(e.currentTarget.value)}
            required
            maxLength={200}
          />
          {request.isError && (
            <Alert color="red" role="alert">
              {errorText(request.error)}
            </Alert>
          )}
          <Button type="submit" loading={request.isPending} disabled={!minor} w="fit-content">
            {t('syndicate.submit')}
          </Button>
        </Stack>
      </form>
    </Card>
  );
}
