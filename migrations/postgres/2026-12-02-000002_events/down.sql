DROP TABLE event_horizon;
DROP TABLE events;
