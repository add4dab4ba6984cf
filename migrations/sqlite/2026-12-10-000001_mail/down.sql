DROP TABLE mail_state;
