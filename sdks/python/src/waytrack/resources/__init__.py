"""One class per API resource; the client exposes one instance of each."""

from .ad_spend import AdSpend
from .analytics import Analytics
from .clicks import Clicks
from .conversions import Conversions
from .stores import Stores
from .track import Track

__all__ = ["AdSpend", "Analytics", "Clicks", "Conversions", "Stores", "Track"]
