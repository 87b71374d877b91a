"""Policy: the rules every layer follows, at the bottom of the house.

* :mod:`.errors` -- the exceptions (one base, :class:`~.errors.WorksheetError`)
  and how a message names the file, field and position;
* :mod:`.limits` -- every size and work limit on untrusted input;
* :mod:`.safetext` -- what user text may hold, and how it stays text;
* :mod:`.files` -- reading a bounded file, writing files all or nothing.

These modules import nothing of worksheet but each other; every other layer
may import them.
"""
