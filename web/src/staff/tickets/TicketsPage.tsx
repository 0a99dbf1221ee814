/**
 * The console's Tickets page (support staff: owner, moderators, support): the open queue, oldest
 * first, and the closed tickets, most recently closed first; a ticket's thread under
 * /staff/tickets/<id>, where staff reply and close it.
 */
import { Anchor, Badge, Group, NativeSelect, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, Route, Routes, useParams } from 'react-router';
import { StatusBadge } from '../../account/AccountPage';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { MessageList, ReplyForm } from '../../support/TicketThread';
import type { Schemas } from '../api';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';
import { useCloseTicket, useReplyToTicket, useTicketQueue, useTicketThread } from './queries';

type Ticket = Schemas['TicketResponse'];

export function TicketsPage() {
  return (
    <Routes>
      <Route index element={<TicketQueue />} />
      <Route path=":id" element={<TicketThread />} />
    </Routes>
  );
}

function TicketQueue() {
  const { t, date } = useI18n();
  const [status, setStatus] = useState<Ticket['status']>('open');
  const list = useTicketQueue({ status });
  const tickets = list.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <Stack>
      <Title order={2}>{t('console.tickets.title')}</Title>
      <Group align="flex-end">
        <NativeSelect
          label={t('console.tickets.queue')}
          value={status}
          onChange={(event) => setStatus(event.currentTarget.value as Ticket['status'])}
          data={[
            { value: 'open', label: t('console.tickets.openQueue') },
            { value: 'closed', label: t('console.tickets.closedQueue') },
          ]}
        />
        <RefreshList list={list} />
      </Group>
      <section role="region" aria-label={t('console.tickets.list')}>
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.isSuccess && (
          <DataTable
            minWidth={640}
            rows={tickets}
            rowKey={(ticket) => ticket.id}
            columns={[
              {
                header: t('console.tickets.subject'),
                cell: (ticket) => (
                  <Anchor component={Link} to={`/staff/tickets/${ticket.id}`}>
                    {ticket.subject}
                  </Anchor>
                ),
              },
              {
                header: t('console.tickets.user'),
                breakAll: true,
                cell: (ticket) => (
                  <Text size="xs" ff="monospace">
                    {ticket.user_id}
                  </Text>
                ),
              },
              {
                header: t('console.tickets.lastMessage'),
                cell: (ticket) => <NoWrap>{date(ticket.last_message_at)}</NoWrap>,
              },
              {
                header: t('console.tickets.status'),
                cell: (ticket) => <TicketState ticket={ticket} />,
              },
            ]}
          />
        )}
        <CursorMore list={list} />
      </section>
    </Stack>
  );
}

function TicketState({ ticket }: { ticket: Ticket }) {
  const { t } = useI18n();
  return (
    <Group gap="xs" wrap="nowrap" style={{ minWidth: 'max-content' }}>
      <StatusBadge status={ticket.status} />
      {ticket.awaiting_staff && (
        <Badge color="orange" variant="dot">
          {t('console.tickets.awaiting')}
        </Badge>
      )}
    </Group>
  );
}

function TicketThread() {
  const { t, date } = useI18n();
  const { id = '' } = useParams();
  const thread = useTicketThread(id);
  const reply = useReplyToTicket(id);
  const close = useCloseTicket(id);

  const back = (
    <Anchor component={Link} to="/staff/tickets">
      {t('console.tickets.back')}
    </Anchor>
  );
  if (thread.isPending) return <Loading />;
  if (thread.isError) {
    return (
      <Stack align="flex-start">
        {back}
        <Failed error={thread.error} retry={() => void thread.refetch()} />
      </Stack>
    );
  }
  const { ticket, messages } = thread.data;

  return (
    <Stack maw={760}>
      {back}
      <Group>
        <Title order={2}>{ticket.subject}</Title>
        <TicketState ticket={ticket} />
      </Group>
      <Text size="sm">
        {t('console.tickets.from', { user: ticket.user_id, date: date(ticket.created_at) })}
      </Text>
      <MessageList
        messages={messages}
        label={t('console.tickets.messages')}
        author={(role) =>
          role === 'staff' ? t('console.tickets.staffAuthor') : t('console.tickets.userAuthor')
        }
      />
      {ticket.status === 'closed' ? (
        <Text>{t('console.tickets.closedNote')}</Text>
      ) : (
        <>
          <ReplyForm
            label={t('console.tickets.reply')}
            submitLabel={t('console.tickets.send')}
            send={(text) => reply.mutateAsync(text)}
            minRows={3}
          />
          <Group>
            <ConfirmAction
              label={t('console.tickets.close')}
              question={t('console.tickets.closeQuestion', { subject: ticket.subject })}
              action={close}
            />
          </Group>
        </>
      )}
    </Stack>
  );
}
