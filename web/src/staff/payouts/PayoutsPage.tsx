/**
 * The console's Payouts page (staff): partners' withdrawal requests by state, newest first, and
 * the moves the service allows: approve a pending one, reject a pending or approved one with a
 * reason, mark an approved one paid with the payout's reference. A move the state no longer
 * allows (another staff member was quicker) comes back as WITHDRAWAL_STATE, shown in words.
 */
import { Group, NativeSelect, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { StatusBadge } from '../../account/AccountPage';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';
import { useRereadWithdrawals, useWithdrawalList, withdrawalMoves } from './queries';

type Withdrawal = Schemas['WithdrawalResponse'];
type WithdrawalState = Withdrawal['status'];

const STATES: WithdrawalState[] = ['pending', 'approved', 'rejected', 'paid'];

export function PayoutsPage() {
  const { t, money, date } = useI18n();
  const [state, setState] = useState<WithdrawalState | ''>('');
  const list = useWithdrawalList({ status: state || undefined });
  const withdrawals = list.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <Stack>
      <Title order={2}>{t('console.payouts.title')}</Title>
      <Group align="flex-end">
        <NativeSelect
          label={t('console.payouts.state')}
          value={state}
          onChange={(event) => setState(event.currentTarget.value as WithdrawalState | '')}
          data={[
            { value: '', label: t('console.payouts.anyState') },
            ...STATES.map((value) => ({ value, label: t(`status.${value}`) })),
          ]}
        />
        <RefreshList list={list} />
      </Group>
      <section role="region" aria-label={t('console.payouts.list')}>
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.isSuccess && (
          <DataTable
            minWidth={860}
            rows={withdrawals}
            rowKey={(withdrawal) => withdrawal.id}
            columns={[
              {
                header: t('console.payouts.requested'),
                cell: (withdrawal) => <NoWrap>{date(withdrawal.created_at)}</NoWrap>,
              },
              {
                header: t('console.payouts.partner'),
                breakAll: true,
                cell: (withdrawal) => (
                  <Text size="xs" ff="monospace">
                    {withdrawal.partner_id}
                  </Text>
                ),
              },
              {
                header: t('console.payouts.amount'),
                cell: (withdrawal) => (
                  <NoWrap>{money(withdrawal.amount, withdrawal.currency)}</NoWrap>
                ),
              },
              {
                header: t('console.payouts.destination'),
                breakAll: true,
                cell: (withdrawal) => withdrawal.destination,
              },
              {
                header: t('console.payouts.status'),
                cell: (withdrawal) => <WithdrawalState withdrawal={withdrawal} />,
              },
              {
                header: t('console.payouts.actions'),
                cell: (withdrawal) => <WithdrawalMoves withdrawal={withdrawal} />,
              },
            ]}
          />
        )}
        <CursorMore list={list} />
      </section>
    </Stack>
  );
}

function WithdrawalState({ withdrawal }: { withdrawal: Withdrawal }) {
  const { t } = useI18n();
  return (
    <Stack gap={2}>
      <NoWrap>
        <StatusBadge status={withdrawal.status} />
      </NoWrap>
      {withdrawal.reason && (
        <Text size="sm">{t('console.payouts.reason', { reason: withdrawal.reason })}</Text>
      )}
      {withdrawal.tx_ref && (
        <Text size="sm" style={{ wordBreak: 'break-all' }}>
          {t('console.payouts.reference', { reference: withdrawal.tx_ref })}
        </Text>
      )}
    </Stack>
  );
}

/** The moves the withdrawal's state allows; the service checks again under a row lock. */
function WithdrawalMoves({ withdrawal }: { withdrawal: Withdrawal }) {
  const { t, money } = useI18n();
  const [reason, setReason] = useState('');
  const [reference, setReference] = useState('');

  const moves = withdrawalMoves(withdrawal.id);
  // Done or refused, the list is read again once the dialog closes: a refusal means the state
  // changed meanwhile.
  const reread = useRereadWithdrawals();

  const pending = withdrawal.status === 'pending';
  const approved = withdrawal.status === 'approved';
  if (!pending && !approved) return null;
  const destination = withdrawal.destination;
  const amount = money(withdrawal.amount, withdrawal.currency);
  return (
    <Group gap="xs" wrap="nowrap">
      {pending && (
        <ConfirmAction
          label={t('console.payouts.approve')}
          question={t('console.payouts.approveQuestion', { amount, destination })}
          color="blue"
          action={moves.approve}
          onClosed={reread}
        />
      )}
      {approved && (
        <ConfirmAction
          label={t('console.payouts.markPaid')}
          question={t('console.payouts.markPaidQuestion', { amount, destination })}
          color="green"
          action={() => moves.paid(reference.trim())}
          onClosed={reread}
        >
          <TextInput
            label={t('console.payouts.referenceLabel')}
            description={t('console.payouts.referenceHint')}
            value={reference}
            onChange={(event) => setReference(event.currentTarget.value)}
            maxLength={200}
          />
        </ConfirmAction>
      )}
      <ConfirmAction
        label={t('console.payouts.reject')}
        question={t('console.payouts.rejectQuestion', { amount })}
        action={() => moves.reject(reason.trim())}
        onClosed={reread}
      >
        <Textarea
          label={t('console.payouts.reasonLabel')}
          value={reason}
          onChange={(event) => setReason(event.currentTarget.value)}
          required
          maxLength={500}
          autosize
          minRows={2}
        />
      </ConfirmAction>
    </Group>
  );
}
