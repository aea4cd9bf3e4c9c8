"""Heat's API (/orchestration/v1/{project_id})."""

from tether.api.orchestration import stacks

ROUTERS = (stacks.router,)
