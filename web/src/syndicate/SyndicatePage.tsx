import {
  Alert,
  Button,
  Card,
  Group,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { StatusBadge } from '../account/AccountPage';
import { useEarnings, useMe, useRequestWithdrawal, useWithdrawals } from '../api/hooks';
import { decimalToMinor, useI18n } from '../i18n/i18n';
import { Failed, Loading } from '../layout/Loading';
import { useNotify } from '../layout/notify';

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
      <Card withBorder component="section" aria-labelledby="balances-title">
        <Title order={2} size="h3" id="balances-title" mb="xs">
          {t('syndicate.balances')}
        </Title>
        {data.balances.length === 0 ? (
          <Text>{t('common.none')}</Text>
        ) : (
          <Table.ScrollContainer minWidth={420}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('syndicate.currency')}</Table.Th>
                  <Table.Th>{t('syndicate.earned')}</Table.Th>
                  <Table.Th>{t('syndicate.requested')}</Table.Th>
                  <Table.Th>{t('syndicate.paidOut')}</Table.Th>
                  <Table.Th>{t('syndicate.available')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.balances.map((b) => (
                  <Table.Tr key={b.currency}>
                    <Table.Td>{b.currency}</Table.Td>
                    <Table.Td>{money(b.earned, b.currency)}</Table.Td>
                    <Table.Td>{money(b.requested, b.currency)}</Table.Td>
                    <Table.Td>{money(b.paid, b.currency)}</Table.Td>
                    <Table.Td>{money(b.available, b.currency)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
      <Card withBorder component="section" aria-labelledby="recent-title">
        <Title order={2} size="h3" id="recent-title" mb="xs">
          {t('syndicate.recent')}
        </Title>
        {data.recent.length === 0 ? (
          <Text>{t('common.none')}</Text>
        ) : (
          <Table.ScrollContainer minWidth={420}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('syndicate.date')}</Table.Th>
                  <Table.Th>{t('syndicate.plan')}</Table.Th>
                  <Table.Th>{t('syndicate.price')}</Table.Th>
                  <Table.Th>{t('syndicate.commission')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.recent.map((c) => (
                  <Table.Tr key={c.id}>
                    <Table.Td>{date(c.created_at)}</Table.Td>
                    <Table.Td>{c.plan_name}</Table.Td>
                    <Table.Td>{money(c.price_minor, c.currency)}</Table.Td>
                    <Table.Td>
                      {money(c.amount, c.currency)} ({c.percent}%)
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
      <WithdrawalForm currencies={data.balances.map((b) => b.currency)} />
      <Card withBorder component="section" aria-labelledby="withdrawals-title">
        <Title order={2} size="h3" id="withdrawals-title" mb="xs">
          {t('syndicate.withdrawals')}
        </Title>
        {withdrawals.isPending && <Loading />}
        {withdrawals.isError && <Failed error={withdrawals.error} />}
        {withdrawals.data?.items.length === 0 && <Text>{t('common.none')}</Text>}
        {withdrawals.data && withdrawals.data.items.length > 0 && (
          <Table.ScrollContainer minWidth={420}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('syndicate.date')}</Table.Th>
                  <Table.Th>{t('syndicate.amount')}</Table.Th>
                  <Table.Th>{t('syndicate.destination')}</Table.Th>
                  <Table.Th>{t('syndicate.status')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {withdrawals.data.items.map((w) => (
                  <Table.Tr key={w.id}>
                    <Table.Td>{date(w.created_at)}</Table.Td>
                    <Table.Td>{money(w.amount, w.currency)}</Table.Td>
                    <Table.Td style={{ wordBreak: 'break-all' }}>{w.destination}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={w.status} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
    </Stack>
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
