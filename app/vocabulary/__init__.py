"""The words the portal stores and shows, shared by every floor: plain enums, no behaviour."""
