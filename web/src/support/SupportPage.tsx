import {
  Alert,
  Anchor,
  Button,
  Card,
  Group,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { StatusBadge } from '../account/AccountPage';
import { useCreateTicket, usePostTicketMessage, useTicket, useTickets } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { Failed, Loading } from '../layout/Loading';
import { MessageList, ReplyForm } from './TicketThread';

export function SupportPage() {
  const { t, date } = useI18n();
  const tickets = useTickets();
  return (
    <Stack maw={720}>
      <Title order={1}>{t('support.title')}</Title>
      <NewTicket />
      <Card withBorder component="section" aria-labelledby="tickets-title">
        <Title order={2} size="h3" id="tickets-title" mb="xs">
          {t('support.tickets')}
        </Title>
        {tickets.isPending && <Loading />}
        {tickets.isError && <Failed error={tickets.error} retry={() => void tickets.refetch()} />}
        {tickets.data?.items.length === 0 && <Text>{t('support.none')}</Text>}
        <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {tickets.data?.items.map((ticket) => (
            <li key={ticket.id}>
              <Group justify="space-between" wrap="nowrap">
                <Anchor component={Link} to={`/support/${ticket.id}`}>
                  {ticket.subject}
                </Anchor>
                <Group gap="xs" wrap="nowrap">
                  <Text size="sm">{date(ticket.last_message_at)}</Text>
                  <StatusBadge status={ticket.status} />
                </Group>
              </Group>
            </li>
          ))}
        </Stack>
      </Card>
    </Stack>
  );
}

/** The fields of a new ticket, as the service names them in a validation failure. */
const TICKET_FIELDS = ['subject', 'message'] as const;

function NewTicket() {
  const { t, errorText, fieldErrors } = useI18n();
  const create = useCreateTicket();
  const navigate = useNavigate();
  const [subject, setSubject] = useState('');
  const [message, setMessage] = useState('');
  const invalid = create.isError ? fieldErrors(create.error) : {};
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { subject: subject.trim(), message: message.trim() },
      { onSuccess: (thread) => void navigate(`/support/${thread.ticket.id}`) },
    );
  }
  return (
    <Card withBorder component="section" aria-labelledby="new-ticket-title">
      <form onSubmit={submit}>
        <Stack gap="xs">
          <Title order={2} size="h3" id="new-ticket-title">
            {t('support.new')}
          </Title>
          <TextInput
            label={t('support.subject')}
            value={subject}
            onChange={(e) => setSubject(e.currentTarget.value)}
            required
            maxLength={200}
            error={invalid.subject}
          />
          <Textarea
            label={t('support.message')}
            value={message}
            onChange={(e) => setMessage(e.currentTarget.value)}
            required
            maxLength={4000}
            autosize
            minRows={3}
            error={invalid.message}
          />
          {create.isError && (
            <Alert color="red" role="alert">
              {errorText(create.error, TICKET_FIELDS)}
            </Alert>
          )}
          <Button type="submit" loading={create.isPending} w="fit-content">
            {t('support.open')}
          </Button>
        </Stack>
      </form>
    </Card>
  );
}

export function TicketPage() {
  const { t } = useI18n();
  const { id = '' } = useParams();
  const thread = useTicket(id);
  const post = usePostTicketMessage(id);
  if (thread.isPending) return <Loading />;
  if (thread.isError) return <Failed error={thread.error} retry={() => void thread.refetch()} />;
  const { ticket, messages } = thread.data;

  return (
    <Stack maw={720}>
      <Anchor component={Link} to="/support">
        {t('support.back')}
      </Anchor>
      <Group>
        <Title order={1}>{ticket.subject}</Title>
        <StatusBadge status={ticket.status} />
      </Group>
      <MessageList
        messages={messages}
        author={(role) => (role === 'staff' ? t('support.staff') : t('support.you'))}
      />
      {ticket.status === 'closed' ? (
        <Text>{t('support.closed')}</Text>
      ) : (
        <ReplyForm
          label={t('support.reply')}
          submitLabel={t('support.send')}
          send={(body) => post.mutateAsync(body)}
        />
      )}
    </Stack>
  );
}
