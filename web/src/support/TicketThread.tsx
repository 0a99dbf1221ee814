import { Alert, Button, Paper, Stack, Text, Textarea } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import type { TicketMessage } from '../api/client';
import { useI18n } from '../i18n/i18n';

/**
 * A ticket's messages, oldest first, staff answers tinted; `author` names who wrote one (the
 * subscriber sees "you", staff see "user"). Shared by the support page and the staff console.
 */
export function MessageList({
  messages,
  author,
  label,
}: {
  messages: readonly TicketMessage[];
  author: (role: TicketMessage['author_role']) => string;
  label?: string;
}) {
  const { date } = useI18n();
  return (
    <Stack
      gap="xs"
      component="ol"
      aria-label={label}
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
            {author(message.author_role)} · {date(message.created_at)}
          </Text>
          <Text style={{ whiteSpace: 'pre-wrap' }}>{message.body}</Text>
        </Paper>
      ))}
    </Stack>
  );
}

/**
 * The reply box under a thread: `send` gets the trimmed text and resolves once it is posted (the
 * box is emptied then); its failure is shown in words.
 */
export function ReplyForm({
  label,
  submitLabel,
  send,
  minRows = 2,
}: {
  label: string;
  submitLabel: string;
  send: (body: string) => Promise<unknown>;
  minRows?: number;
}) {
  const { errorText } = useI18n();
  const [body, setBody] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await send(body.trim());
      setBody('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)}>
      <Stack gap="xs">
        <Textarea
          label={label}
          value={body}
          onChange={(event) => setBody(event.currentTarget.value)}
          required
          maxLength={4000}
          autosize
          minRows={minRows}
        />
        {error !== null && (
          <Alert color="red" role="alert">
            {errorText(error)}
          </Alert>
        )}
        <Button type="submit" loading={busy} w="fit-content">
          {submitLabel}
        </Button>
      </Stack>
    </form>
  );
}
