"""The real collector process of the service tests (:class:`pldp.service.process.CollectorProcess`)."""

from pldp.service.process import CollectorProcess as Server
from pldp.service.process import free_port

__all__ = ["Server", "free_port"]
