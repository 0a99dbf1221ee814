/**
 * The console's Tickets page (support staff: owner, moderators, support): the open queue, oldest
 * first, and the closed tickets, most recently closed first; a ticket's thread under
 * /staff/tickets/<id>, where staff reply and close it.
 */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  NativeSelect,
  Paper,
  Stack,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, Route, Routes, useParams } from 'react-router';
import { StatusBadge } from '../../account/AccountPage';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { type Schemas, staffCall, useCursorList } from '../api';
import { ConfirmAction } from '../ConfirmAction';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';

type Ticket = Schemas['TicketResponse'];
type Thread = Schemas['TicketThreadResponse'];
type Message = Schemas['TicketMessageResponse'];

const TICKETS_KEY = ['staff', 'tickets'] as const;
const threadKey = (id: string) => [...TICKETS_KEY, 'thread', id] as const;

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
  const list = useCursorList<Ticket>([...TICKETS_KEY, 'queue'], '/admin/tickets', { status });
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
  const { t, date, errorText } = useI18n();
  const { id = '' } = useParams();
  const client = useQueryClient();
  const thread = useQuery({
    queryKey: threadKey(id),
    queryFn: () => staffCall<Thread>('GET', `/admin/tickets/${id}`),
  });
  const [body, setBody] = useState('');
  const reply = useMutation({
    mutationFn: (text: string) =>
      staffCall<Message>('POST', `/admin/tickets/${id}/messages`, { body: { body: text } }),
    onSuccess: () => setBody(''),
    onSettled: () => client.invalidateQueries({ queryKey: TICKETS_KEY }),
  });

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

  function submit(event: FormEvent) {
    event.preventDefault();
    reply.mutate(body.trim());
  }

  async function close() {
    try {
      await staffCall<Ticket>('POST', `/admin/tickets/${id}/close`);
    } finally {
      await client.invalidateQueries({ queryKey: TICKETS_KEY });
    }
  }

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
      <Stack
        gap="xs"
        component="ol"
        aria-label={t('console.tickets.messages')}
        style={{ listStyle: 'none', padding: 0, margin: 0 }}
      >
        {messages.map((message) => (
          <Paper
            component="li"
            key={message.id}
            withBorder
            p="sm"
            bg={message.author_role === 'staff' ? 'indigo.0' : undefined}
          >
            <Text size="sm" fw={700}>
              {message.author_role === 'staff'
                ? t('console.tickets.staffAuthor')
                : t('console.tickets.userAuthor')}{' '}
              · {date(message.created_at)}
            </Text>
            <Text style={{ whiteSpace: 'pre-wrap' }}>{message.body}</Text>
          </Paper>
        ))}
      </Stack>
      {ticket.status === 'closed' ? (
        <Text>{t('console.tickets.closedNote')}</Text>
      ) : (
        <>
          <form onSubmit={submit}>
            <Stack gap="xs">
              <Textarea
                label={t('console.tickets.reply')}
                value={body}
                onChange={(event) => setBody(event.currentTarget.value)}
                required
                maxLength={4000}
                autosize
                minRows={3}
              />
              {reply.isError && (
                <Alert color="red" role="alert">
                  {errorText(reply.error)}
                </Alert>
              )}
              <Button type="submit" loading={reply.isPending} w="fit-content">
                {t('console.tickets.send')}
              </Button>
            </Stack>
          </form>
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
