"""Properties of games played by random players (R1–R27).

* Whole games (`ruleset.simulator`: random seeds, 2–6 players, the default map, generated grid maps
  and small random, even ragged, maps) with invariants checked after every turn: conservation,
  regions, scores, hands, visibility, determinism, and that every game ends.
* Single orders and combat turns from states of such games, against an independent model of
  R9, R10, R13–R18, R20 and R21 written in this file from the spec.

Example counts keep the whole file to a few seconds.
"""

from __future__ import annotations

from collections import Counter, deque

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ruleset import (
    DEFAULT_BOARD,
    Kind,
    MentionKind,
    Order,
    OrderType,
    Phase,
    Role,
    check_order,
    game_rng,
    label_regions,
    parse_map,
    resolve_turn,
    visible_to,
)
from ruleset.board import ARTIFACT, HABITABLE, UNINHABITABLE, grid_map_text
from ruleset.execution import execute
from ruleset.kinds import FULL_POOL, HAND_SIZE, STARTING_BOMBERS
from ruleset.position import Position
from ruleset.simulator import play_game, replay, set_up
from ruleset.turn_log import TurnLog

seeds = st.integers(min_value=0, max_value=2**32 - 1)
player_counts = st.integers(min_value=2, max_value=6)


@st.composite
def small_map_texts(draw, min_artifacts: int = 0) -> str:
    """2–8 rows of up to 10 systems, mostly habitable; rows may differ in length, and an inner row
    may even be empty (it keeps the numbering of the rows after it). At least `min_artifacts`
    artifact systems when the map has room for them."""
    height = draw(st.integers(2, 8))
    width = draw(st.integers(2, 10))
    terrain = st.sampled_from("......MMAA")
    rows = []
    for _ in range(height):
        length = draw(st.one_of(st.just(width), st.integers(0, width)))
        rows.append(list(draw(st.lists(terrain, min_size=length, max_size=length))))
    if not rows[-1]:
        rows[-1] = ["."]
    places = [(y, x) for y, row in enumerate(rows) for x in range(len(row))]
    missing = min_artifacts - sum(row.count("A") for row in rows)
    if missing > 0:
        for y, x in draw(
            st.lists(
                st.sampled_from(places),
                min_size=min(missing, len(places)),
                max_size=min(missing, len(places)),
                unique=True,
            )
        ):
            rows[y][x] = "A"
    return "".join("".join(row) + "\n" for row in rows)


@st.composite
def grid_map_texts(draw) -> str:
    """Medium grid maps with at least four artifacts (2×2 of the lattice)."""
    return grid_map_text(draw(st.integers(8, 18)), draw(st.integers(8, 14)), draw(st.integers(4, 5)))


# Boards other than the default: small ones (with enough artifacts not to end in turn 1, mostly),
# and medium grids.
other_boards = st.one_of(
    small_map_texts(min_artifacts=3).map(parse_map),
    small_map_texts().map(parse_map),
    grid_map_texts().map(parse_map),
)
boards = st.one_of(st.just(DEFAULT_BOARD), other_boards)


# -- an independent model of the rules' derived facts ------------------------------------------


def flood_fill_regions(board, members: set[int]) -> set[frozenset[int]]:
    """R4/R5 from the definition: orthogonal neighbours by (x, y), read from the map rows."""
    cell_at = {}
    cell = 0
    for y, row in enumerate(board.rows):
        for x in range(len(row)):
            cell_at[(x, y)] = cell
            cell += 1
    xy = {c: p for p, c in cell_at.items()}
    seen: set[int] = set()
    components = set()
    for start in members:
        if start in seen:
            continue
        component = {start}
        queue = deque([start])
        while queue:
            x, y = xy[queue.popleft()]
            for p in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                other = cell_at.get(p)
                if other in members and other not in component:
                    component.add(other)
                    queue.append(other)
        seen |= component
        components.add(frozenset(component))
    return components


def region_members(state) -> set[int]:
    members = set(state.colonies) | set(state.leader_at.values())
    return members - state.destroyed - state.unification_cells


def hands(state) -> Counter:
    return Counter(f.owner for f in state.fleets.values() if f.role is Role.COLONIST)


def check_state(state) -> None:
    """Invariants of any state between turns."""
    board = state.board
    artifact_cells = board.artifact_cells()
    total = sum(FULL_POOL) + len(artifact_cells)
    held = hands(state)
    # Conservation: every colonist is in the pool, in a hand, on the board or out of the game.
    assert sum(state.pool) + sum(held.values()) + len(state.colonies) + state.removed == total
    assert all(n >= 0 for n in state.pool)
    # Artifacts are never destroyed (R23): on the board or collected.
    assert sum(p.scores[4] for p in state.players) + len(state.artifacts) == len(artifact_cells)
    assert state.artifacts <= set(artifact_cells)
    # One piece per system; destroyed systems hold nothing (R20).
    leader_cells = list(state.leader_at.values())
    assert len(leader_cells) == len(set(leader_cells))
    assert not set(leader_cells) & set(state.colonies)
    assert not state.destroyed & (set(state.colonies) | set(leader_cells) | state.artifacts)
    # Colonies match terrain (R10); artifact systems are scientist colonies.
    for cell, kind in state.colonies.items():
        terrain = board.terrain[cell]
        if terrain == UNINHABITABLE:
            assert kind is Kind.MINING
        elif terrain == ARTIFACT:
            assert kind is Kind.SCIENTIST
        else:
            assert terrain == HABITABLE and kind is not Kind.MINING
    assert all(cell in state.colonies for cell in state.artifacts)
    # Leaders stand on habitable systems next to a scientist colony (R9, R21).
    for fleet_id, cell in state.leader_at.items():
        fleet = state.fleets[fleet_id]
        assert fleet.role is Role.LEADER
        assert board.terrain[cell] == HABITABLE
        assert any(state.colonies.get(n) is Kind.SCIENTIST for n in board.neighbours[cell])
    # Fleets: ascending unique ids below next_object_id; 4 leaders each; at most 2 bombers; ≤ 6 colonists.
    ids = list(state.fleets)
    assert ids == sorted(ids) and all(fid < state.next_object_id for fid in ids)
    assert all(state.fleets[fid].id == fid for fid in ids)
    for player in state.players:
        mine = state.fleets_of(player.id)
        assert sorted(f.kind for f in mine if f.role is Role.LEADER) == list(Kind)
        assert sum(1 for f in mine if f.role is Role.BOMBER) <= STARTING_BOMBERS
        assert held[player.id] <= HAND_SIZE
        assert all(s >= 0 for s in player.scores)
    assert set(held) <= {p.id for p in state.players}
    # Regions are exactly the connected components of the members (R5).
    members = region_members(state)
    labels = label_regions(board, members)
    assert set(labels) == members
    groups: dict[int, set[int]] = {}
    for cell, label in labels.items():
        groups.setdefault(label, set()).add(cell)
    assert all(label == min(cells) for label, cells in groups.items())
    assert {frozenset(g) for g in groups.values()} == flood_fill_regions(board, members)
    # Conflicts (R16–R19): none pending in a normal phase, the first one started in a combat phase.
    if state.phase is Phase.NORMAL:
        assert state.conflicts == ()
    if state.phase is Phase.COMBAT:
        assert state.conflicts and state.conflicts[0].started
        assert not any(c.started for c in state.conflicts[1:])
    if state.phase is Phase.OVER:  # R25a: what is left is unfought
        assert not any(c.started for c in state.conflicts)
    for conflict in state.conflicts:
        attacker, defender = state.fleets[conflict.attacker], state.fleets[conflict.defender]
        assert attacker.role is defender.role is Role.LEADER
        assert attacker.kind is defender.kind is conflict.kind
        assert attacker.owner != defender.owner
        if conflict.unification is not None:
            assert conflict.unification in state.colonies
    # The end (R25).
    assert (state.phase is Phase.OVER) == (state.result is not None)
    if state.result is not None:
        result = state.result
        for player in state.players:
            spread = result.distributed[player.id]
            assert sum(spread) == sum(player.scores)
            assert all(a >= s for a, s in zip(spread, player.scores[:4]))
            assert result.final[player.id] == min(spread)
        best = max(tuple(sorted(v)) for v in result.distributed.values())
        assert result.winners and all(tuple(sorted(result.distributed[w])) == best for w in result.winners)
        assert all(
            tuple(sorted(v)) < best for pid, v in result.distributed.items() if pid not in result.winners
        )
    # R27: opponents' colonist kinds are hidden; everything else is shown.
    for viewer in state.players:
        view = visible_to(state, viewer.id)
        assert view.scores == viewer.scores and view.pool_total == sum(state.pool)
        assert set(view.fleets) == set(state.fleets)
        for fleet in state.fleets.values():
            seen = view.fleets[fleet.id]
            hidden = fleet.role is Role.COLONIST and fleet.owner != viewer.id
            assert seen.kind is (None if hidden else fleet.kind)
            assert (seen.owner, seen.role, seen.at) == (
                fleet.owner,
                fleet.role,
                state.leader_at.get(fleet.id),
            )


def check_turn(before, orders, outcome) -> None:
    """Invariants relating a state to the next one."""
    after = outcome.state
    check_state(after)
    assert after.turn == before.turn + 1
    assert after.board == before.board and after.seed == before.seed
    assert after.next_object_id >= before.next_object_id
    combat = before.phase is Phase.COMBAT
    assert after.rotation == before.rotation + (0 if combat else 1)
    # The random player only sends orders that check_order accepts in sequence.
    accepted = []
    for order in orders:
        assert check_order(before, order, accepted) is None, order
        accepted.append(order)
    # No score ever decreases; bombers are only consumed.
    for old, new in zip(before.players, after.players):
        assert all(n >= o for n, o in zip(new.scores, old.scores)), (old, new)

        def bombers(s, pid):
            return sum(1 for f in s.fleets_of(pid) if f.role is Role.BOMBER)

        assert bombers(after, new.id) <= bombers(before, old.id)
    gained = {
        p.id: [n - o for n, o in zip(q.scores, p.scores)] for p, q in zip(before.players, after.players)
    }
    if combat:
        # R18: only the winner's owner scores, in one category: +1 T (internal) or 1 + removed.
        conflict = before.conflicts[0]
        scorers = [pid for pid, g in gained.items() if any(g)]
        owners = {before.fleets[conflict.attacker].owner, before.fleets[conflict.defender].owner}
        assert len(scorers) == 1 and scorers[0] in owners
        category = Kind.SCIENTIST if conflict.internal else conflict.kind
        assert [i for i, g in enumerate(gained[scorers[0]]) if g] == [category]
        assert all(o.type == 4 for o in orders)
        assert after.artifacts == before.artifacts
    else:
        # Scores come only from colonizations (one point each) and artifact collections.
        events = Counter(e.kind for e in outcome.events)
        assert sum(sum(g[:4]) for g in gained.values()) == events["scored"] <= events["colonized"]
        collected = sum(int(e.detail) for e in outcome.events if e.kind == "artifacts collected")
        assert sum(g[4] for g in gained.values()) == collected
    # R25a: the end freezes the queue; a combat turn fought its first conflict.
    if after.phase is Phase.OVER:
        kept = before.conflicts[1:] if combat else before.conflicts
        assert after.conflicts[: len(kept)] == kept and (combat or len(after.conflicts) >= len(kept))
        if combat:
            assert after.conflicts == kept
    # Refill (R24): exactly 6 colonists each unless the game ended.
    if after.phase is not Phase.OVER:
        assert all(hands(after)[p.id] == HAND_SIZE for p in after.players)
    # Messages: all for this turn, for real players; the usual turn-end messages.
    ids = {p.id for p in after.players}
    assert all(m.turn == after.turn and m.player in ids for m in outcome.messages)
    # R26a: references name each thing once, and only real systems, players and fleets.
    for m in outcome.messages:
        assert len(set(m.mentions)) == len(m.mentions), m
        for mention in m.mentions:
            if mention.kind is MentionKind.SYSTEM:
                cell = after.board.cell_of_object(mention.id)
                assert cell is not None and after.board.system_id(cell) == mention.id
                assert after.board.system_name(cell) in m.body
            elif mention.kind is MentionKind.PLAYER:
                assert mention.id in ids
            else:
                assert mention.kind is MentionKind.FLEET
                assert mention.id in before.fleets or mention.id in after.fleets
    subjects = Counter((m.player, m.subject) for m in outcome.messages)
    for pid in ids:
        if after.phase is Phase.OVER:
            assert subjects[(pid, "GAME OVER!")] == 1
        else:
            assert subjects[(pid, "Turn complete")] == 1
            assert subjects[(pid, "Turn Order" if not combat else "Combat Complete!")] == 1


class Checker:
    """An observer for play_game that checks every turn and counts them."""

    def __init__(self):
        self.turns = 0
        self.messages = []

    def __call__(self, before, orders, outcome):
        snapshot = (dict(before.fleets), dict(before.leader_at), dict(before.colonies), before.players)
        check_turn(before, orders, outcome)
        # resolve_turn never mutates the state it was given.
        assert snapshot == (
            dict(before.fleets),
            dict(before.leader_at),
            dict(before.colonies),
            before.players,
        )
        self.turns += 1
        self.messages.extend(outcome.messages)


def play_checked(players, board, seed):
    """Play a game checking every turn; every game of random players ends (R24a)."""
    checker = Checker()
    check_state(set_up(players, board, seed))
    record = play_game(players, board, seed, observer=checker)
    assert record.turns == checker.turns
    return record, checker


# -- properties -------------------------------------------------------------------------------


def _label(board, record) -> str:
    return (
        f"{'default' if board == DEFAULT_BOARD else 'other'} map, "
        f"ended by {record.state.result.reason.value}, {min(record.turns // 10 * 10, 50)}+ turns, "
        f"{'with' if record.combat_turns else 'no'} combat"
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=player_counts)
def test_every_turn_keeps_the_invariants_on_the_default_map(seed, players):
    record, checker = play_checked(players, DEFAULT_BOARD, seed)
    assert record.ended and checker.turns == record.turns
    event(_label(DEFAULT_BOARD, record))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=player_counts, board=other_boards)
def test_every_turn_keeps_the_invariants_on_other_maps(seed, players, board):
    record, checker = play_checked(players, board, seed)
    assert checker.turns == record.turns
    event(_label(board, record))


@settings(max_examples=60, deadline=None)
@given(seed=seeds, players=player_counts)
def test_every_game_on_the_default_map_ends(seed, players):
    record = play_game(players, DEFAULT_BOARD, seed)
    assert record.state.phase is Phase.OVER
    assert record.winners and set(record.winners) <= {p.name for p in record.state.players}


@settings(max_examples=30, deadline=None)
@given(seed=seeds, players=player_counts, board=boards)
def test_same_seed_same_game(seed, players, board):
    """Determinism: the same seed gives the same orders, states and messages; replaying the
    recorded orders reproduces every state and message."""
    first, second = Checker(), Checker()
    a, b = (play_game(players, board, seed, observer=checker) for checker in (first, second))
    assert a.state == b.state and a.orders == b.orders and a.turns == b.turns
    assert first.messages == second.messages
    outcomes = replay(a)
    assert outcomes[-1].state == a.state if outcomes else a.state.turn == 0
    assert [m for o in outcomes for m in o.messages] == first.messages


@settings(max_examples=25, deadline=None)
@given(seed=seeds, players=player_counts, data=st.data())
def test_resolving_the_same_turn_twice_gives_the_same_outcome(seed, players, data):
    """Determinism of resolve_turn itself, from a state in the middle of a game."""
    record = play_game(players, DEFAULT_BOARD, seed)
    turn = data.draw(st.integers(1, record.turns))
    state = set_up(players, DEFAULT_BOARD, seed)
    for t in range(1, turn):
        state = resolve_turn(state, list(record.orders[t - 1]), game_rng(seed, t)).state
    orders = list(record.orders[turn - 1])
    one = resolve_turn(state, orders, game_rng(seed, turn))
    two = resolve_turn(state, orders, game_rng(seed, turn))
    assert one == two


@settings(max_examples=25, deadline=None)
@given(seed=seeds, players=player_counts, data=st.data())
def test_incremental_region_labels_match_a_recount(seed, players, data):
    """The turn's cached labels agree with a full recount (R5) after every change a turn makes:
    colonies and leaders placed (Position.add_member), leaders sent home, colonies removed, the
    R21 withdrawal, and conflicts queued and dropped (pending unification systems)."""
    from ruleset.position import Position
    from ruleset.state import Conflict

    record = play_game(players, DEFAULT_BOARD, seed)
    turn = data.draw(st.integers(0, record.turns - 1))
    state = set_up(players, DEFAULT_BOARD, seed)
    for t in range(1, turn + 1):
        state = resolve_turn(state, list(record.orders[t - 1]), game_rng(seed, t)).state
    position = Position(state)
    position.labels()

    def recount():
        members = set(position.colonies) | set(position.leader_on)
        return label_regions(state.board, members - position.unification_cells)

    assert position.labels() == recount()
    changes = st.sampled_from(["colonize", "send home", "remove colonies", "withdraw", "queue", "drop"])
    for change in data.draw(st.lists(changes, max_size=14)):
        empty = [
            c
            for c in range(state.board.size)
            if c not in position.colonies and c not in position.destroyed and c not in position.leader_on
        ]
        if change == "colonize" and empty:
            cell = data.draw(st.sampled_from(empty))
            position.colonies[cell] = Kind.SCIENTIST
            position.add_member(cell)
        elif change == "send home" and position.leader_at:
            position.send_home(data.draw(st.sampled_from(sorted(position.leader_at))))
        elif change == "remove colonies" and position.colonies:
            cells = data.draw(st.lists(st.sampled_from(sorted(position.colonies)), max_size=4, unique=True))
            position.remove_colonies(cells)
        elif change == "withdraw":
            position.withdraw_unsupported_leaders()
        elif change == "queue" and position.colonies:
            cell = data.draw(st.sampled_from(sorted(position.colonies)))
            position.conflicts.append(Conflict(False, Kind.SETTLER, 0, 0, unification=cell))
            position.conflicts_changed()
        elif change == "drop" and position.conflicts:
            position.conflicts.pop(data.draw(st.integers(0, len(position.conflicts) - 1)))
            position.conflicts_changed()
        assert position.labels() == recount(), change
        event(change)
    # the next turn starts from the labels this one ends with
    frozen = position.freeze(turn=state.turn, rotation=state.rotation, phase=state.phase)
    assert frozen.cached_region_labels() == recount()
    assert Position(frozen).labels() == recount()


def test_the_region_cache_is_ignored_once_the_pieces_change():
    from dataclasses import replace

    from ruleset.state import Conflict

    state = set_up(3, DEFAULT_BOARD, 8)
    after = resolve_turn(state, [], game_rng(8, 1)).state
    assert after.cached_region_labels() is not None
    assert replace(after, rotation=5).cached_region_labels() is not None  # same pieces
    assert replace(after, colonies=dict(after.colonies)).cached_region_labels() is None
    assert replace(after, leader_at={}).cached_region_labels() is None
    unification = Conflict(False, Kind.SETTLER, 0, 0, unification=next(iter(after.colonies)))
    assert replace(after, conflicts=(unification,)).cached_region_labels() is None
    assert replace(after, region_cache=None) == after  # not part of the value


# -- single orders against an independent model of R9, R10, R13–R17, R20, R21 ----------------

SETTLER_FIRST = (Kind.SETTLER, Kind.SCIENTIST, Kind.MERCHANT, Kind.MINING)


class Model:
    """The rules' view of one normal-phase state, rebuilt from the spec with the test's flood fill."""

    def __init__(self, state, lifted: int | None = None):
        self.state = state
        self.board = state.board
        self.leader_cells = {c: f for f, c in state.leader_at.items() if f != lifted}
        members = (set(state.colonies) | set(self.leader_cells)) - state.unification_cells
        self.region_of = {}
        for component in flood_fill_regions(self.board, members):
            for cell in component:
                self.region_of[cell] = component

    def around(self, cell):
        x, y = self.board.coords[cell]
        for p in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            other = self.board.cell_at(*p)
            if other is not None:
                yield other

    def bordering(self, cell) -> list[frozenset]:
        found = []
        for n in self.around(cell):
            region = self.region_of.get(n)
            if region is not None and region not in found:
                found.append(region)
        return found

    def leaders(self, region, kind=None) -> list[int]:
        return sorted(
            f
            for c, f in self.leader_cells.items()
            if c in region and (kind is None or self.state.fleets[f].kind is kind)
        )

    def free(self, cell) -> bool:
        s = self.state
        return cell not in s.destroyed and cell not in s.colonies and cell not in self.leader_cells

    def scientist_next_to(self, cell) -> bool:
        return any(self.state.colonies.get(n) is Kind.SCIENTIST for n in self.around(cell))


_STATES: dict = {}
ORACLE_BOARDS = (DEFAULT_BOARD, parse_map(grid_map_text(12, 10, 4)), parse_map(grid_map_text(16, 12, 5)))
oracle_games = st.tuples(player_counts, st.sampled_from(ORACLE_BOARDS), st.integers(0, 7))


def game_states(players, board, seed, phase=Phase.NORMAL) -> list:
    """The states of one random game before each turn of `phase` (cached: examples share a few
    dozen games)."""
    key = (players, board.rows, seed)
    if key not in _STATES:
        states = []

        def keep(before, orders, outcome):
            states.append(before)

        play_game(players, board, seed, observer=keep)
        _STATES[key] = states
    return [s for s in _STATES[key] if s.phase is phase]


def normal_states(players, board, seed) -> list:
    return game_states(players, board, seed, Phase.NORMAL)


def executed_alone(state, order):
    """Execute `order` on `state` as it stands, bypassing the submission checks: the condition it
    fails, or None when it succeeds."""
    return execute(Position(state), order, state.rotation_order(), TurnLog(state.turn + 1))


def assert_refused_for_good(state, order, cell) -> None:
    """R7a: refused with code 3 and a reason naming the system, and it would not have succeeded."""
    problem = check_order(state, order)
    assert problem is not None and problem.code == 3, problem
    assert state.board.system_name(cell) in problem.message, problem
    assert executed_alone(state, order) is not None
    event("refused at submission (R7a)")


def plausible_targets(state, model, mining: bool | None) -> list[int]:
    """Free systems next to a region member (of the terrain for `mining`, if given)."""
    terrain = state.board.terrain
    return [
        c
        for c in range(state.board.size)
        if model.free(c)
        and model.bordering(c)
        and (mining is None or (terrain[c] == UNINHABITABLE) == mining)
    ]


def score_delta(before, after):
    return {
        p.id: tuple(n - o for n, o in zip(q.scores[:4], p.scores[:4]))
        for p, q in zip(before.players, after.players)
    }


def expect_conflict_started(state, after, conflict_kind, attacker, defender, internal):
    if after.phase is Phase.OVER:
        return
    assert after.phase is Phase.COMBAT
    c = after.conflicts[0]
    assert (c.internal, c.kind, c.attacker, c.defender) == (internal, conflict_kind, attacker, defender)
    model = Model(after)
    for leader, strength in ((attacker, c.attacker_strength), (defender, c.defender_strength)):
        cell = after.leader_at[leader]
        if internal:
            expected = sum(1 for n in model.around(cell) if after.colonies.get(n) is Kind.SCIENTIST)
        else:
            expected = sum(1 for m in model.region_of[cell] if after.colonies.get(m) is conflict_kind)
        assert strength == expected


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=oracle_games, data=st.data())
def test_a_single_colonization_follows_r10_and_r13_to_r16(game, data):
    players, board, seed = game
    state = data.draw(st.sampled_from(normal_states(players, board, seed)))
    player = data.draw(st.sampled_from([p.id for p in state.players]))
    colonists = state.hand(player)
    if not colonists:
        return
    fleet = data.draw(st.sampled_from(colonists))
    model = Model(state)
    near = plausible_targets(state, model, fleet.kind is Kind.MINING)
    joining = [c for c in near if len(model.bordering(c)) >= 2]
    choices = [st.integers(0, board.size - 1)]
    choices += [st.sampled_from(cells) for cells in (near, joining) if cells]
    cell = data.draw(st.one_of(*choices))
    order_type = OrderType.COLONIZE_MINING if fleet.kind is Kind.MINING else OrderType.COLONIZE
    order = Order(player, fleet.id, order_type, board.system_id(cell))
    terrain_ok = (board.terrain[cell] == UNINHABITABLE) == (fleet.kind is Kind.MINING)
    fixed = cell in state.destroyed or cell in state.colonies or cell in state.unification_cells
    if fixed or not terrain_ok:
        assert_refused_for_good(state, order, cell)
        return
    assert check_order(state, order) is None
    after = resolve_turn(state, [order], game_rng(seed, state.turn + 1)).state

    bordering = model.bordering(cell)
    with_leaders = [r for r in bordering if model.leaders(r)]
    valid = model.free(cell) and terrain_ok and not (len(bordering) >= 2 and len(with_leaders) >= 3)
    delta = score_delta(state, after)
    if not valid:
        assert fleet.id in after.fleets and after.colonies.get(cell) == state.colonies.get(cell)
        assert all(d == (0, 0, 0, 0) for d in delta.values())
        assert after.phase is not Phase.COMBAT
        return
    assert fleet.id not in after.fleets and after.colonies[cell] is fleet.kind
    expected = {p.id: [0, 0, 0, 0] for p in state.players}
    conflicts = []
    if len(bordering) == 1:
        region = bordering[0]
        leader = (model.leaders(region, fleet.kind) or [None])[0]
        if leader is None and fleet.kind is not Kind.SETTLER:
            leader = (model.leaders(region, Kind.SETTLER) or [None])[0]
        if leader is not None:
            expected[state.fleets[leader].owner][fleet.kind] += 1
    elif len(bordering) >= 2:
        for kind in SETTLER_FIRST:
            found = [ls[0] for r in sorted(bordering, key=min) if (ls := model.leaders(r, kind))]
            if len(found) >= 2:
                conflicts.append((kind, found[0], found[1]))
    event(
        f"{len(bordering)} bordering regions, {'conflict' if conflicts else 'no conflict'}, "
        f"{'scored' if any(any(v) for v in expected.values()) else 'no score'}"
    )
    assert delta == {pid: tuple(v) for pid, v in expected.items()}
    if conflicts:
        kind, a, b = conflicts[0]
        rotation = state.rotation_order()
        owners = (state.fleets[a].owner, state.fleets[b].owner)
        if owners[1] == player or (
            owners[0] != player
            and (rotation.index(owners[1]) - rotation.index(player)) % len(rotation)
            < (rotation.index(owners[0]) - rotation.index(player)) % len(rotation)
        ):
            a, b = b, a
        assert cell in after.unification_cells or after.phase is Phase.OVER
        expect_conflict_started(state, after, kind, a, b, internal=False)
        assert len(after.conflicts) == len(conflicts) or after.phase is Phase.OVER
    elif after.phase is not Phase.OVER:
        assert after.phase is Phase.NORMAL and after.conflicts == ()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=oracle_games, data=st.data())
def test_a_single_move_follows_r9_and_r17(game, data):
    players, board, seed = game
    state = data.draw(st.sampled_from(normal_states(players, board, seed)))
    player = data.draw(st.sampled_from([p.id for p in state.players]))
    leader = state.leader(player, data.draw(st.sampled_from(list(Kind))))
    model = Model(state, lifted=leader.id)
    near = [c for c in range(board.size) if model.free(c) and model.scientist_next_to(c)]
    cell = data.draw(
        st.one_of(st.integers(0, board.size - 1), st.sampled_from(near))
        if near
        else st.integers(0, board.size - 1)
    )
    order = Order(player, leader.id, OrderType.MOVE, board.system_id(cell))
    if (
        cell in state.destroyed
        or cell in state.colonies
        or cell in state.unification_cells
        or board.terrain[cell] == UNINHABITABLE
    ):
        assert_refused_for_good(state, order, cell)
        return
    assert check_order(state, order) is None
    after = resolve_turn(state, [order], game_rng(seed, state.turn + 1)).state

    bordering = model.bordering(cell)
    valid = (
        board.terrain[cell] == HABITABLE
        and model.free(cell)
        and len(bordering) <= 1
        and model.scientist_next_to(cell)
    )
    rivals = model.leaders(bordering[0], leader.kind) if valid and bordering else []
    event(
        f"{'valid' if valid else 'invalid'} move, {len(bordering)} bordering"
        f"{', internal conflict' if rivals else ''}"
    )
    if not valid:
        assert after.leader_at.get(leader.id) == state.leader_at.get(leader.id)
        assert after.phase is not Phase.COMBAT
        return
    assert after.leader_at[leader.id] == cell
    assert all(d == (0, 0, 0, 0) for d in score_delta(state, after).values())
    if rivals:
        expect_conflict_started(state, after, leader.kind, leader.id, rivals[0], internal=True)
    elif after.phase is not Phase.OVER:
        assert after.phase is Phase.NORMAL


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=oracle_games, data=st.data())
def test_a_single_bombing_follows_r20_and_r21(game, data):
    players, board, seed = game
    state = data.draw(st.sampled_from(normal_states(players, board, seed)))
    bombers = [f for f in state.fleets.values() if f.role is Role.BOMBER]
    if not bombers:
        return
    bomber = data.draw(st.sampled_from(bombers))
    busy = sorted(set(state.colonies) | set(state.leader_at.values()))
    cell = data.draw(st.one_of(st.sampled_from(busy), st.integers(0, board.size - 1)))
    order = Order(bomber.owner, bomber.id, OrderType.ATTACK, board.system_id(cell))
    valid = (
        cell not in state.destroyed and cell not in state.artifacts and cell not in state.unification_cells
    )
    if not valid:  # every condition of R20 is static (R7a)
        assert_refused_for_good(state, order, cell)
        return
    assert check_order(state, order) is None
    event("valid bombing")
    after = resolve_turn(state, [order], game_rng(seed, state.turn + 1)).state
    assert bomber.id not in after.fleets and after.destroyed == state.destroyed | {cell}
    colonies = {c: k for c, k in state.colonies.items() if c != cell}
    assert after.colonies == colonies
    assert after.removed == state.removed + (cell in state.colonies)
    stay = {f: c for f, c in state.leader_at.items() if c != cell}
    stay = {
        f: c for f, c in stay.items() if any(colonies.get(n) is Kind.SCIENTIST for n in board.neighbours[c])
    }
    assert after.leader_at == stay
    assert all(d == (0, 0, 0, 0) for d in score_delta(state, after).values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=oracle_games, data=st.data())
def test_a_combat_turn_follows_r16_r18_r21(game, data):
    players, board, seed = game
    states = game_states(players, board, seed, Phase.COMBAT)
    if not states:
        return
    state = data.draw(st.sampled_from(states))
    conflict = state.conflicts[0]
    attacker, defender = state.fleets[conflict.attacker], state.fleets[conflict.defender]
    kind = conflict.reinforcement_kind
    orders, sent = [], {}
    for owner in (attacker.owner, defender.owner):
        eligible = [f.id for f in state.hand(owner) if f.kind is kind]
        chosen = data.draw(st.lists(st.sampled_from(eligible), unique=True)) if eligible else []
        orders += [Order(owner, fid, OrderType.REINFORCE) for fid in chosen]
        sent[owner] = len(chosen)
    after = resolve_turn(state, orders, game_rng(seed, state.turn + 1)).state

    attack = conflict.attacker_strength + sent[attacker.owner]
    defence = conflict.defender_strength + sent[defender.owner]
    winner, loser = (attacker, defender) if attack > defence else (defender, attacker)  # tie: defender
    model = Model(state)
    doomed = set()
    if not conflict.internal:
        losing_region = model.region_of[state.leader_at[loser.id]]
        assert conflict.unification not in losing_region
        doomed = {
            c
            for c in losing_region
            if state.colonies.get(c) is conflict.kind and board.terrain[c] != ARTIFACT
        }
    event(
        f"{'internal' if conflict.internal else 'external'}, "
        f"{'attacker' if winner is attacker else 'defender'} wins, {min(len(doomed), 3)}+ removed"
    )
    colonies = {c: k for c, k in state.colonies.items() if c not in doomed}
    assert after.colonies == colonies
    assert after.removed == state.removed + len(orders) + len(doomed)
    assert all(o.fleet not in after.fleets for o in orders)
    expected = {p.id: [0, 0, 0, 0] for p in state.players}
    expected[winner.owner][Kind.SCIENTIST if conflict.internal else conflict.kind] += (
        1 if conflict.internal else 1 + len(doomed)
    )
    assert score_delta(state, after) == {pid: tuple(v) for pid, v in expected.items()}
    leaders = {f: c for f, c in state.leader_at.items() if f != loser.id}
    leaders = {
        f: c
        for f, c in leaders.items()
        if any(colonies.get(n) is Kind.SCIENTIST for n in board.neighbours[c])
    }
    assert after.leader_at == leaders
    assert after.conflicts[:1] != state.conflicts[:1] or after.phase is Phase.OVER


# -- two rule bugs the oracles above found (fixed in 66c9cd6), pinned as plain examples -------


def test_r13_scores_a_colony_on_the_lowest_system_of_its_region():
    """Regression: the colony joins first (Position.add_member relabels the region to the new,
    lower cell), so execution._colonize must look the scorer up under the new label."""
    from dataclasses import replace

    from ruleset import add_player, new_game

    board = DEFAULT_BOARD
    state = new_game(board, 0)
    state, _ = add_player(state, "P1", hand=[Kind.MERCHANT] * 6)
    state, _ = add_player(state, "P2", hand=[Kind.MERCHANT] * 6)
    leader = state.leader(1, Kind.MERCHANT).id
    state = replace(state, leader_at={leader: board.cell_at(11, 0)})  # next to the artifact (10, 0)
    for x, expected in ((9, 1), (12, 2)):  # (9, 0) is below the region's lowest system, (12, 0) above
        colonist = state.hand(1)[0].id
        order = Order(1, colonist, OrderType.COLONIZE, board.system_id(board.cell_at(x, 0)))
        state = resolve_turn(state, [order], game_rng(0, state.turn + 1)).state
        assert board.cell_at(x, 0) in state.colonies
        assert state.player(1).scores[Kind.MERCHANT] == expected, f"colony at ({x}, 0)"


def test_r16_a_lost_war_removes_only_the_losers_colonies():
    """Regression: if conflicts.resolve_conflict drops the conflict before labelling the losing
    region, the unification system already joins both sides and the winner's colonies of that
    kind are removed too (and counted for the winner)."""
    from dataclasses import replace

    from ruleset import add_player, new_game

    board = parse_map("......A\n.......\n.......\nA.....A\n")
    cell = board.cell_at
    state = new_game(board, 0)
    state, _ = add_player(state, "P1", hand=[Kind.SETTLER] * 6)
    state, _ = add_player(state, "P2", hand=[Kind.MERCHANT] * 6)
    m1, m2 = state.leader(1, Kind.MERCHANT).id, state.leader(2, Kind.MERCHANT).id
    colonies = dict(state.colonies)
    colonies[cell(2, 0)] = colonies[cell(4, 0)] = Kind.MERCHANT
    state = replace(
        state,
        colonies=colonies,
        leader_at={m1: cell(1, 0), m2: cell(5, 0)},
        pool=(state.pool[0] - 2, *state.pool[1:]),
    )
    # A|m1 M . M m2|A on row 0: P1's settler joins the two merchant regions at (3, 0).
    order = Order(1, state.hand(1)[0].id, OrderType.COLONIZE, board.system_id(cell(3, 0)))
    state = resolve_turn(state, [order], game_rng(0, 1)).state
    assert state.phase is Phase.COMBAT and state.conflicts[0].unification == cell(3, 0)
    state = resolve_turn(state, [], game_rng(0, 2)).state  # 1:1, the defender (P2) wins
    assert cell(2, 0) not in state.colonies  # the loser's merchant colony goes
    assert state.colonies.get(cell(4, 0)) is Kind.MERCHANT  # the winner's stays
    assert state.player(2).scores[Kind.MERCHANT] == 2  # +1, +1 per colony removed
    assert state.removed == 1
