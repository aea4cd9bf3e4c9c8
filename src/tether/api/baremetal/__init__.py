"""Ironic's API (/baremetal/v1)."""

from fastapi import APIRouter

router = APIRouter(prefix="/baremetal/v1", tags=["baremetal"])
