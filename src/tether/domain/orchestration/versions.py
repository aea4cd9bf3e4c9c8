"""The HOT versions heat accepts, dated and by release name (heat's setup.cfg ``heat.templates``)."""

from __future__ import annotations

# release name -> the dated version it stands for
RELEASE_NAMES = {"newton": "2016-10-14", "ocata": "2017-02-24", "pike": "2017-09-01", "queens": "2018-03-02",
                 "rocky": "2018-08-31", "wallaby": "2021-04-16"}
DATED_VERSIONS = ("2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08", "2016-10-14", "2017-02-24",
                  "2017-09-01", "2018-03-02", "2018-08-31", "2021-04-16")
VERSIONS = frozenset(DATED_VERSIONS) | frozenset(RELEASE_NAMES)


def dated(version: str) -> str:
    """The dated form of an accepted version: ``wallaby`` is ``2021-04-16``."""
    return RELEASE_NAMES.get(version, version)
