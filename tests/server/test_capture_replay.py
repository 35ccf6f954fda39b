"""Every client-to-server frame of the real captures, replayed against our server, gets a
well-formed answer of the kind spec/protocol.md expects."""

import pytest

import protocol as tp
from protocol import Version
from tests.protocol.captures import ALL, CLIENT, frames

from .wire import Wire, make_directory

# request class -> the reply classes it may get (a Fail is always possible)
SINGLE = {
    tp.Connect: (tp.Okay,),
    tp.Login: (tp.Okay,),
    tp.CreateAccount: (tp.Okay,),
    tp.Ping: (tp.Okay,),
    tp.FinishedTurn: (tp.Okay,),
    tp.GetFeatures: (tp.Features,),
    tp.GetTimeRemaining: (tp.TimeRemaining,),
    tp.GetGames: (tp.Game,),
    tp.GetObjectIDs: (tp.ObjectIDs,),
    tp.GetObjectDescIDs: (tp.ObjectDescIDs,),
    tp.GetOrderDescIDs: (tp.OrderDescIDs,),
    tp.ProbeOrder: (tp.Order,),
}
MULTI = {
    tp.GetObjectsByID: (tp.Tp03Object, tp.Tp04Object),
    tp.GetObjectDesc: (tp.ObjectDesc,),
    tp.GetOrderDesc: (tp.OrderDesc,),
    tp.GetOrder: (tp.Order,),
    tp.GetPlayer: (tp.Player,),
}


@pytest.mark.parametrize("capture", ALL)
def test_replayed_capture_gets_well_formed_answers(capture):
    directory, game = make_directory(name="tp")
    # the cpptext client logs in to an account that existed on the reference server
    game.create_account("alice", "secret tp")
    requests = frames(capture, CLIENT)
    version = requests[0].version
    wire = Wire(directory, version)
    answered = 0
    for frame in requests:
        request = tp.decode(frame, order_descs={}) if frame.type not in (12, 34) else None
        replies = [r for r in wire.frames(_send(wire, frame)) if r.sequence == frame.sequence]
        assert replies, f"no answer to {frame.type} (sequence {frame.sequence})"
        decoded = [tp.decode(r, object_descs=_descs(), order_descs=_order_descs()) for r in replies]
        kind = (
            type(request) if request is not None else (tp.InsertOrder if frame.type == 12 else tp.ProbeOrder)
        )
        if kind is tp.InsertOrder:
            allowed = (tp.Okay,) if version == Version.TP03 else (tp.Order,)
            assert len(decoded) == 1 and isinstance(decoded[0], allowed + (tp.Fail,)), decoded
        elif kind in SINGLE:
            assert len(decoded) == 1 and isinstance(decoded[0], SINGLE[kind] + (tp.Fail,)), (kind, decoded)
        elif kind in MULTI:
            if isinstance(decoded[0], tp.Fail):
                assert len(decoded) == 1
            else:
                assert isinstance(decoded[0], tp.Sequence) and decoded[0].number == len(decoded) - 1
                assert all(isinstance(d, MULTI[kind] + (tp.Fail,)) for d in decoded[1:]), decoded
        else:
            pytest.fail(f"the capture sends {kind.__name__}, which this test does not know")
        answered += 1
    assert answered == len(requests)
    assert game.player_id("alice") == 1


def _send(wire: Wire, frame: tp.Frame) -> bytes:
    wire.connection.dataReceived(frame.to_bytes())
    data = wire.transport.value()
    wire.transport.clear()
    return data


def _descs():
    from server.views.tp.catalogue import OBJECT_DESCS

    return OBJECT_DESCS


def _order_descs():
    from server.views.tp.catalogue import ORDER_DESCS

    return ORDER_DESCS
