"""Trial's synchronous Deferred assertions, for plain pytest functions.

`successResultOf(d)` is the result of a Deferred that has already fired (the test fails if it
has not, or failed); `failureResultOf(d, *types)` the Failure of one that already failed.
"""

from twisted.trial.unittest import SynchronousTestCase

_case = SynchronousTestCase()

successResultOf = _case.successResultOf
failureResultOf = _case.failureResultOf
assertNoResult = _case.assertNoResult
