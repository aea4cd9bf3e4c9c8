"""Neutron's API (/network/v2.0)."""

from fastapi import APIRouter

router = APIRouter(prefix="/network/v2.0", tags=["network"])
