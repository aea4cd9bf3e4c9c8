"""Nova's API (/compute/v2.1)."""

from fastapi import APIRouter

router = APIRouter(prefix="/compute/v2.1", tags=["compute"])
