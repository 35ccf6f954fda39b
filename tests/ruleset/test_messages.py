"""R26a: every kind of board message, its exact body and the references (mentions) it carries.

Subjects are REF's; bodies keep REF's first sentence ("Your" for "You're", single spaces) and say
what happened; mentions are the systems, players and fleets the body names, each once, in order
of first appearance. The same texts are documented for client writers in NOTES-rules.md.
"""

from __future__ import annotations

from dataclasses import replace

from ruleset import (
    EndReason,
    Kind,
    Mention,
    MentionKind,
    Message,
    Order,
    OrderType,
    Role,
    add_player,
    end_game,
    game_rng,
    new_game,
    parse_map,
    resolve_turn,
)

# y=4 A.A.A..
# y=3 .......
# y=2 .......
# y=1 .......
# y=0 .......
BOARD = parse_map("A.A.A..\n.......\n.......\n.......\n.......\n")


def c(x: int, y: int) -> int:
    found = BOARD.cell_at(x, y)
    assert found is not None
    return found


def S(x: int, y: int) -> Mention:
    return Mention(MentionKind.SYSTEM, BOARD.system_id(c(x, y)))


def P(player: int) -> Mention:
    return Mention(MentionKind.PLAYER, player)


def F(fleet: int) -> Mention:
    return Mention(MentionKind.FLEET, fleet)


def two(hand_ann=(Kind.MERCHANT,) * 6, hand_bob=(Kind.SETTLER,) * 6, **changes):
    state = new_game(BOARD, seed=5)
    state, _ = add_player(state, "ann", hand=list(hand_ann))
    state, _ = add_player(state, "bob", hand=list(hand_bob))
    colonies = {**state.colonies, **changes.pop("colonies", {})}
    return replace(state, colonies=colonies, **changes)


def leader(state, player: int, kind: Kind) -> int:
    return state.leader(player, kind).id


def colonist(state, player: int) -> int:
    return state.hand(player)[0].id


def colonize(state, player: int, x: int, y: int, fleet: int | None = None) -> Order:
    fleet = colonist(state, player) if fleet is None else fleet
    kind = state.fleets[fleet].kind
    order_type = OrderType.COLONIZE_MINING if kind is Kind.MINING else OrderType.COLONIZE
    return Order(player, fleet, order_type, BOARD.system_id(c(x, y)))


def move(state, player: int, kind: Kind, x: int, y: int) -> Order:
    return Order(player, leader(state, player, kind), OrderType.MOVE, BOARD.system_id(c(x, y)))


def attack(state, player: int, x: int, y: int) -> Order:
    bomber = next(f.id for f in state.fleets_of(player) if f.role is Role.BOMBER)
    return Order(player, bomber, OrderType.ATTACK, BOARD.system_id(c(x, y)))


def messages(state, orders, turn_seed=1):
    return resolve_turn(state, orders, game_rng(5, turn_seed)).messages


def one(found: tuple[Message, ...], player: int, subject: str) -> Message:
    (message,) = [m for m in found if m.player == player and m.subject == subject]
    return message


# -- orders done --------------------------------------------------------------------------------


def test_colonize_done_founding_a_region():
    state = two()
    order = colonize(state, 1, 3, 1)
    m = one(messages(state, [order]), 1, "Colonize fleet order complete")
    assert m.body == (
        'Your fleet "Colonist Fleet" has colonized 3, 1. The merchant colony founds a new region; '
        "nobody scores."
    )
    assert m.mentions == (F(order.fleet), S(3, 1))
    assert m.turn == 1


def test_colonize_done_scoring_for_another_players_leader_and_for_ones_own():
    state = two(leader_at={})
    bob_merchant, ann_merchant = leader(state, 2, Kind.MERCHANT), leader(state, 1, Kind.MERCHANT)
    state = replace(state, leader_at={bob_merchant: c(1, 4)})  # between (0, 4) and (2, 4)
    order = colonize(state, 1, 1, 3)
    m = one(messages(state, [order]), 1, "Colonize fleet order complete")
    assert m.body == (
        'Your fleet "Colonist Fleet" has colonized 1, 3. The merchant colony joins a region; '
        "bob's Merchant Leader scores 1 Money."
    )
    assert m.mentions == (F(order.fleet), S(1, 3), P(2), F(bob_merchant))
    state = replace(state, leader_at={ann_merchant: c(1, 4)})
    m = one(messages(state, [colonize(state, 1, 1, 3)]), 1, "Colonize fleet order complete")
    assert m.body.endswith("The merchant colony joins a region; your Merchant Leader scores 1 Money.")
    assert m.mentions == (F(colonist(state, 1)), S(1, 3), F(ann_merchant))


def test_colonize_done_without_a_scoring_leader():
    state = two()
    m = one(messages(state, [colonize(state, 2, 0, 3)]), 2, "Colonize fleet order complete")
    assert m.body.endswith("The settler colony joins a region without a settler leader; nobody scores.")
    m = one(messages(state, [colonize(state, 1, 0, 3)]), 1, "Colonize fleet order complete")
    assert m.body.endswith(
        "The merchant colony joins a region without a merchant or settler leader; nobody scores."
    )


def test_colonize_done_merging_regions():
    state = two()
    m = one(messages(state, [colonize(state, 1, 1, 4)]), 1, "Colonize fleet order complete")
    assert m.body.endswith("The merchant colony joins 2 regions into one; nobody scores.")


def external(state_changes=None):
    """ann's and bob's settler leaders next to the artifacts (0, 4) and (4, 4); (1, 4)..(3, 4) are
    bob's colonies, so ann's merchant at (2, 3)... joins the regions of (2, 4) and (1, 4)."""
    state = two(hand_ann=(Kind.MERCHANT,) + (Kind.SETTLER,) * 5)
    leaders = {leader(state, 1, Kind.SETTLER): c(0, 3), leader(state, 2, Kind.SETTLER): c(4, 3)}
    return replace(
        state, leader_at=leaders, colonies={**state.colonies, c(1, 3): Kind.SETTLER, c(3, 3): Kind.SETTLER}
    )


def test_colonize_done_starting_an_external_conflict_and_the_combat_message():
    state = external()
    order = colonize(state, 1, 2, 3)
    found = messages(state, [order])
    m = one(found, 1, "Colonize fleet order complete")
    assert m.body == (
        'Your fleet "Colonist Fleet" has colonized 2, 3. The merchant colony borders 3 regions with rival '
        "settler leaders: a conflict is queued, and until it is decided the colony is a pending "
        "unification system; nobody scores."
    )
    ann_settler, bob_settler = leader(state, 1, Kind.SETTLER), leader(state, 2, Kind.SETTLER)
    combat = [m for m in found if m.subject == "COMBAT!"]
    assert [m.player for m in combat] == [1, 2] and combat[0].body == combat[1].body
    assert combat[0].body == (
        "The next turn is an EXTERNAL combat turn! Combatants are: ann with an initial strength of 1 "
        "and bob with an initial strength of 1.\n"
        "Settler leaders fight: ann's Settler Leader at 0, 3 attacks and bob's Settler Leader at 4, 3 "
        "defends.\n"
        "The colony at 2, 3 would join their regions. The loser's settler colonies in its region are "
        "removed (artifact systems stay), and the winner scores 1 People plus 1 per colony removed.\n"
        "Reinforcements are settler colonists: ann and bob may each send any number with Reinforce "
        "orders, each adding 1 to its owner's strength.\n"
        "A tie goes to the defender, bob."
    )
    assert combat[0].mentions == (P(1), P(2), F(ann_settler), S(0, 3), F(bob_settler), S(4, 3), S(2, 3))


def internal():
    """bob's scientist leader at (0, 3), next to the artifact (0, 4) and a scientist colony (0, 2)."""
    state = two(colonies={c(0, 2): Kind.SCIENTIST})
    bob_scientist = leader(state, 2, Kind.SCIENTIST)
    return replace(state, leader_at={bob_scientist: c(0, 3)}), bob_scientist


def test_move_done_plain_and_challenging_an_incumbent_and_the_internal_combat_message():
    state = two()
    order = move(state, 1, Kind.SCIENTIST, 0, 3)
    m = one(messages(state, [order]), 1, "Move fleet order complete")
    assert m.body == 'Your fleet "Scientist Leader" has moved to 0, 3.'
    assert m.mentions == (F(order.fleet), S(0, 3))
    state, bob_scientist = internal()
    order = move(state, 1, Kind.SCIENTIST, 1, 2)
    found = messages(state, [order])
    m = one(found, 1, "Move fleet order complete")
    assert m.body == (
        'Your fleet "Scientist Leader" has moved to 1, 2. It has entered the region of bob\'s Scientist '
        "Leader: an internal conflict between them is queued."
    )
    assert m.mentions == (F(order.fleet), S(1, 2), P(2), F(bob_scientist))
    combat = one(found, 2, "COMBAT!")
    assert combat.body == (
        "The next turn is an INTERNAL combat turn! Combatants are: ann with an initial strength of 1 "
        "and bob with an initial strength of 2.\n"
        "Scientist leaders fight: ann's Scientist Leader at 1, 2 attacks and bob's Scientist Leader at "
        "0, 3 defends.\n"
        "Both stand in one region. The loser returns home, and the winner scores 1 Technology.\n"
        "Reinforcements are scientist colonists: ann and bob may each send any number with Reinforce "
        "orders, each adding 1 to its owner's strength.\n"
        "A tie goes to the defender, bob."
    )
    assert combat.mentions == (P(1), P(2), F(order.fleet), S(1, 2), F(bob_scientist), S(0, 3))


def test_attack_done_removing_a_colony_a_leader_and_unsupported_leaders():
    state = two()
    m = one(messages(state, [attack(state, 1, 5, 0)]), 1, "Attack fleet order complete")
    assert m.body == 'Your fleet "Bomber" has destroyed 5, 0.'
    # a colony
    state = two(colonies={c(3, 1): Kind.MERCHANT})
    order = attack(state, 1, 3, 1)
    m = one(messages(state, [order]), 1, "Attack fleet order complete")
    assert m.body == 'Your fleet "Bomber" has destroyed 3, 1. The merchant colony there is gone.'
    assert m.mentions == (F(order.fleet), S(3, 1))
    # a leader, and leaders left without a scientist colony next to them
    state = two(colonies={c(3, 2): Kind.SCIENTIST})
    bob_merchant, bob_settler = leader(state, 2, Kind.MERCHANT), leader(state, 2, Kind.SETTLER)
    ann_mining = leader(state, 1, Kind.MINING)
    state = replace(state, leader_at={bob_merchant: c(3, 1), bob_settler: c(2, 2), ann_mining: c(4, 2)})
    order = attack(state, 1, 3, 1)
    m = one(messages(state, [order]), 1, "Attack fleet order complete")
    assert m.body == 'Your fleet "Bomber" has destroyed 3, 1. The bombing sent bob\'s Merchant Leader home.'
    order = attack(state, 1, 3, 2)
    m = one(messages(state, [order]), 1, "Attack fleet order complete")
    assert m.body == (
        'Your fleet "Bomber" has destroyed 3, 2. The scientist colony there is gone. Without a scientist '
        "colony next to them, your Mining Leader, bob's Merchant Leader and bob's Settler Leader "
        "returned home."
    )
    assert m.mentions == (F(order.fleet), S(3, 2), F(ann_mining), P(2), F(bob_merchant), F(bob_settler))


# -- orders failed ------------------------------------------------------------------------------


def test_failure_messages_name_the_one_condition_that_failed():
    state = two(rotation=1)  # bob first
    bob_merchant = leader(state, 2, Kind.MERCHANT)
    taken = Order(2, bob_merchant, OrderType.MOVE, BOARD.system_id(c(0, 3)))
    order = colonize(state, 1, 0, 3)
    m = one(messages(state, [taken, order]), 1, "Colonize order failed")
    assert m.body == (
        'Your fleet "Colonist Fleet" could not colonize 0, 3: 0, 3 was taken earlier this turn by '
        "bob's Merchant Leader."
    )
    assert m.mentions == (F(order.fleet), S(0, 3), P(2), F(bob_merchant))
    # colonized earlier by bob; destroyed earlier by bob's bomber
    bob_colony = colonize(state, 2, 3, 1)
    m = one(messages(state, [bob_colony, colonize(state, 1, 3, 1)]), 1, "Colonize order failed")
    assert m.body.endswith(": 3, 1 was colonized earlier this turn by bob.")
    bombing = attack(state, 2, 3, 1)
    m = one(messages(state, [bombing, move(state, 1, Kind.MERCHANT, 3, 1)]), 1, "Move order failed")
    assert m.body == (
        'Your fleet "Merchant Leader" could not move to 3, 1: 3, 1 was destroyed earlier this turn by '
        "bob's Bomber."
    )
    assert m.mentions == (F(leader(state, 1, Kind.MERCHANT)), S(3, 1), P(2), F(bombing.fleet))
    m = one(messages(state, [bombing, attack(state, 1, 3, 1)]), 1, "Attack order failed")
    assert m.body.startswith('Your fleet "Bomber" could not attack 3, 1: 3, 1 was destroyed earlier')


def test_move_failures():
    state = two(colonies={c(1, 3): Kind.MERCHANT})
    m = one(messages(state, [move(state, 1, Kind.MERCHANT, 5, 1)]), 1, "Move order failed")
    assert m.body == 'Your fleet "Merchant Leader" could not move to 5, 1: no scientist colony is next to it.'
    m = one(messages(state, [move(state, 1, Kind.MERCHANT, 1, 4)]), 1, "Move order failed")
    assert m.body == 'Your fleet "Merchant Leader" could not move to 1, 4: it would join 3 regions.'
    ann_scientist = leader(state, 1, Kind.SCIENTIST)
    state = replace(state, leader_at={ann_scientist: c(3, 3)})
    m = one(messages(state, [move(state, 1, Kind.MERCHANT, 3, 3)]), 1, "Move order failed")
    assert m.body.endswith(": 3, 3 is occupied by your Scientist Leader.")


# -- end of turn, joining -----------------------------------------------------------------------


def test_turn_complete_and_turn_order():
    state = two()
    found = messages(state, [])
    score = one(found, 1, "Turn complete")
    assert (
        score.body
        == "Your Current Score: \nMoney: 0\nTechnology: 0\nPeople: 0\nRaw Materials: 0\nAlien Artifacts: 0"
    )
    assert score.mentions == ()
    order = one(found, 1, "Turn Order")
    assert order.body == "The order for the next turn is: bob ann "
    assert order.mentions == (P(2), P(1))


def test_welcome_and_new_player():
    state = new_game(BOARD)
    state, first = add_player(state, "ann", hand=[Kind.MERCHANT])
    state, second = add_player(state, "bob", hand=[Kind.MERCHANT])
    assert [(m.player, m.subject, m.mentions) for m in first] == [(1, "Welcome", ())]
    assert first[0].body.startswith("Welcome to Thousand Parsec!\nThis server is running on tpserver-tae.")
    assert [(m.player, m.subject, m.body, m.mentions) for m in second[1:]] == [
        (1, "New Player", "New player bob has joined the game.", (P(2),))
    ]


# -- combat complete ----------------------------------------------------------------------------


def test_combat_complete_external_with_removed_colonies():
    state = external()
    combat = resolve_turn(state, [colonize(state, 1, 2, 3)], game_rng(5, 1)).state
    # bob reinforces with two settlers: 1 + 2 beats ann's 1
    reinforce = [Order(2, f.id, OrderType.REINFORCE) for f in combat.hand(2)[:2]]
    found = resolve_turn(combat, reinforce, game_rng(5, 2)).messages
    done = [m for m in found if m.subject == "Combat Complete!"]
    assert [m.player for m in done] == [1, 2]
    ann_settler = leader(state, 1, Kind.SETTLER)
    assert done[0].body == (
        "bob has won the battle with a strength of 3!\n"
        "ann lost with a strength of 1, and ann's Settler Leader returned home from 0, 3.\n"
        "Removed settler colonies: 1, 3.\n"
        "bob gains 2 People."
    )
    assert done[0].mentions == (P(2), P(1), F(ann_settler), S(0, 3), S(1, 3))
    # with colonies to lose, and the systems named
    state = external()
    state = replace(state, colonies={**state.colonies, c(0, 2): Kind.SETTLER, c(1, 2): Kind.SETTLER})
    combat = resolve_turn(state, [colonize(state, 1, 2, 3)], game_rng(5, 1)).state
    reinforce = [Order(2, f.id, OrderType.REINFORCE) for f in combat.hand(2)[:4]]
    found = resolve_turn(combat, reinforce, game_rng(5, 2)).messages
    body = one(found, 1, "Combat Complete!").body
    assert "\nRemoved settler colonies: 0, 2; 1, 2; 1, 3.\nbob gains 4 People." in body


def test_combat_complete_internal():
    state, _ = internal()
    combat = resolve_turn(state, [move(state, 1, Kind.SCIENTIST, 1, 2)], game_rng(5, 1)).state
    found = resolve_turn(combat, [], game_rng(5, 2)).messages
    m = one(found, 1, "Combat Complete!")
    assert m.body == (
        "bob has won the battle with a strength of 2!\n"
        "ann lost with a strength of 1, and ann's Scientist Leader returned home from 1, 2.\n"
        "bob gains 1 Technology."
    )
    assert m.mentions == (P(2), P(1), F(leader(state, 1, Kind.SCIENTIST)), S(1, 2))


# -- game over ----------------------------------------------------------------------------------


def test_game_over_says_why_and_ranks_every_player_with_their_categories():
    state = new_game(BOARD)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT], scores=(2, 3, 4, 5, 1))
    state, _ = add_player(state, "bob", hand=[Kind.MERCHANT], scores=(9, 9, 9, 1, 0))
    state, _ = add_player(state, "cy", hand=[Kind.MERCHANT], scores=(3, 3, 4, 5, 0))
    found = end_game(state, EndReason.OPERATOR).messages
    assert [m.player for m in found] == [1, 2, 3]
    ranking = (
        "Final ranking (categories after distributing alien artifacts):\n"
        "1. ann: 3 (Money 3, Technology 3, People 4, Raw Materials 5; 1 alien artifact)\n"
        "1. cy: 3 (Money 3, Technology 3, People 4, Raw Materials 5; 0 alien artifacts)\n"
        "3. bob: 1 (Money 9, Technology 9, People 9, Raw Materials 1; 0 alien artifacts)"
    )
    assert found[1].body == (
        "ann and cy have won the game with a score of 3! Your final score after distributing your alien "
        "artifacts was: 1.\nThe game was ended by the operator.\n" + ranking
    )
    assert all(m.mentions == (P(1), P(3), P(2)) for m in found)


def test_game_over_reasons():
    state = new_game(BOARD)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT])
    lines = {reason: end_game(state, reason).messages[0].body.split("\n")[1] for reason in EndReason}
    assert lines == {
        EndReason.ARTIFACTS: "The game ended because only 3 alien artifacts were left on the board.",
        EndReason.POOL: "The game ended because the colonist pool ran out.",
        EndReason.STALEMATE: "The game ended in a stalemate: no colonist fleet could colonize any system.",
        EndReason.OPERATOR: "The game was ended by the operator.",
    }
    single = end_game(state).messages[0].body
    assert single.startswith("ann has won the game with a score of 0! Your final score after distributing")
