import {
  Alert,
  Box,
  Button,
  Card,
  Group,
  Stack,
  Table,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useRef, useState } from 'react';
import { type Click, COLS, SameGame } from '../../../src/game/samegame';
import type { GameRound, ScoreResult } from '../api/client';
import { useLeaderboard, useStartRound, useSubmitScore } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { Failed, Loading } from '../layout/Loading';

/** Tile colours, told apart by more than hue: each has its own shape too. */
const TILES = [
  { color: '#c92a2a', mark: '●' },
  { color: '#1864ab', mark: '■' },
  { color: '#2b8a3e', mark: '▲' },
  { color: '#862e9c', mark: '◆' },
];

interface Play {
  round: GameRound;
  game: SameGame;
  clicks: Click[];
}

export function GamePage() {
  const { t, errorText } = useI18n();
  const start = useStartRound();
  const submit = useSubmitScore();
  const play = useRef<Play | null>(null);
  const [, setVersion] = useState(0);
  const [result, setResult] = useState<ScoreResult | null>(null);

  function newRound() {
    setResult(null);
    submit.reset();
    start.mutate(undefined, {
      onSuccess: (round) => {
        play.current = { round, game: new SameGame(round.board), clicks: [] };
        setVersion((v) => v + 1);
      },
    });
  }

  function click(row: number, col: number) {
    const current = play.current;
    if (!current || result) return;
    if (current.game.click(row, col) > 0) {
      current.clicks.push([row, col]);
      setVersion((v) => v + 1);
    }
  }

  function send() {
    const current = play.current;
    if (!current) return;
    submit.mutate(
      { roundId: current.round.round_id, body: { clicks: current.clicks } },
      { onSuccess: setResult },
    );
  }

  const current = play.current;
  const over = current !== null && current.game.clickable().length === 0;
  return (
    <Stack maw={560}>
      <Title order={1}>{t('game.title')}</Title>
      <Text size="sm">{t('game.rules')}</Text>
      <Group>
        <Button onClick={newRound} loading={start.isPending}>
          {t('game.start')}
        </Button>
      </Group>
      {start.isError && (
        <Alert color="red" role="alert">
          {errorText(start.error)}
        </Alert>
      )}
      {current && (
        <>
          <Group role="status" aria-live="polite">
            <Text fw={700} data-testid="local-score">
              {t('game.score', { score: current.game.score })}
            </Text>
            <Text>{t('game.remaining', { count: current.game.remaining })}</Text>
            {over && <Text>{t('game.over')}</Text>}
          </Group>
          <Board game={current.game} onClick={click} disabled={result !== null} />
          {!result && (
            <Button onClick={send} loading={submit.isPending} variant={over ? 'filled' : 'light'}>
              {t('game.submit')}
            </Button>
          )}
          {submit.isError && (
            <Alert color="red" role="alert">
              {errorText(submit.error)}
            </Alert>
          )}
          {result && (
            <Alert color="green" role="status">
              {t('game.result', { score: result.score })}
            </Alert>
          )}
        </>
      )}
      <Leaderboard />
    </Stack>
  );
}

function Board({
  game,
  onClick,
  disabled,
}: {
  game: SameGame;
  onClick: (row: number, col: number) => void;
  disabled: boolean;
}) {
  const { t } = useI18n();
  const cells = game.toCells();
  return (
    <Box
      role="grid"
      aria-label={t('game.board')}
      style={{
        display: 'grid',
        gridTemplateColumns: `repeat(${COLS}, 1fr)`,
        gap: 2,
        maxWidth: 440,
      }}
    >
      {cells.map((line, row) => (
        <div role="row" key={row} style={{ display: 'contents' }}>
          {line.map((cell, col) => (
            <div role="gridcell" key={col} style={{ aspectRatio: '1' }}>
              {cell === null ? (
                <span
                  aria-label={t('game.empty', { row: row + 1, col: col + 1 })}
                  role="img"
                  style={{ display: 'block', width: '100%', height: '100%' }}
                />
              ) : (
                <UnstyledButton
                  aria-label={t('game.tile', { row: row + 1, col: col + 1, color: cell + 1 })}
                  disabled={disabled}
                  onClick={() => onClick(row, col)}
                  style={{
                    width: '100%',
                    height: '100%',
                    background: TILES[cell].color,
                    color: '#fff',
                    borderRadius: 4,
                    textAlign: 'center',
                    fontSize: 14,
                  }}
                >
                  <span aria-hidden="true">{TILES[cell].mark}</span>
                </UnstyledButton>
              )}
            </div>
          ))}
        </div>
      ))}
    </Box>
  );
}

function Leaderboard() {
  const { t } = useI18n();
  const board = useLeaderboard();
  return (
    <Card withBorder component="section" aria-labelledby="leaderboard-title">
      <Title order={2} size="h3" id="leaderboard-title" mb="xs">
        {t('game.leaderboard')}
      </Title>
      {board.isPending && <Loading />}
      {board.isError && <Failed error={board.error} />}
      {board.data?.length === 0 && <Text>{t('common.none')}</Text>}
      {board.data && board.data.length > 0 && (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('game.player')}</Table.Th>
              <Table.Th>{t('game.best')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {board.data.map((entry) => (
              <Table.Tr key={entry.user_id}>
                <Table.Td>{entry.user_id.slice(0, 8)}</Table.Td>
                <Table.Td>{entry.best_score}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}
