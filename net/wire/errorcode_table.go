// errorcode_table.go: the error codes of PROTOCOL.md §8, one constant each,
// transcribed from the table there (keep the two in step).

package wire

// Error codes of PROTOCOL.md §8 (foreign/go/errors/errors.yaml of the
// reference plus the client-side ProducerSendFailed). Each is an ErrorCode,
// usable as a Go error and comparable with errors.Is.
const (
	// ErrError is error code 1 (Error).
	ErrError ErrorCode = 1
	// ErrInvalidConfiguration is error code 2 (InvalidConfiguration).
	ErrInvalidConfiguration ErrorCode = 2
	// ErrInvalidCommand is error code 3 (InvalidCommand).
	ErrInvalidCommand ErrorCode = 3
	// ErrInvalidFormat is error code 4 (InvalidFormat).
	ErrInvalidFormat ErrorCode = 4
	// ErrFeatureUnavailable is error code 5 (FeatureUnavailable).
	ErrFeatureUnavailable ErrorCode = 5
	// ErrInvalidIdentifier is error code 6 (InvalidIdentifier).
	ErrInvalidIdentifier ErrorCode = 6
	// ErrInvalidVersion is error code 7 (InvalidVersion).
	ErrInvalidVersion ErrorCode = 7
	// ErrDisconnected is error code 8 (Disconnected).
	ErrDisconnected ErrorCode = 8
	// ErrCannotEstablishConnection is error code 9 (CannotEstablishConnection).
	ErrCannotEstablishConnection ErrorCode = 9
	// ErrCannotCreateBaseDirectory is error code 10 (CannotCreateBaseDirectory).
	ErrCannotCreateBaseDirectory ErrorCode = 10
	// ErrCannotCreateRuntimeDirectory is error code 11 (CannotCreateRuntimeDirectory).
	ErrCannotCreateRuntimeDirectory ErrorCode = 11
	// ErrCannotRemoveRuntimeDirectory is error code 12 (CannotRemoveRuntimeDirectory).
	ErrCannotRemoveRuntimeDirectory ErrorCode = 12
	// ErrCannotCreateStateDirectory is error code 13 (CannotCreateStateDirectory).
	ErrCannotCreateStateDirectory ErrorCode = 13
	// ErrStateFileNotFound is error code 14 (StateFileNotFound).
	ErrStateFileNotFound ErrorCode = 14
	// ErrStateFileCorrupted is error code 15 (StateFileCorrupted).
	ErrStateFileCorrupted ErrorCode = 15
	// ErrInvalidStateEntryChecksum is error code 16 (InvalidStateEntryChecksum).
	ErrInvalidStateEntryChecksum ErrorCode = 16
	// ErrCannotOpenDatabase is error code 19 (CannotOpenDatabase).
	ErrCannotOpenDatabase ErrorCode = 19
	// ErrResourceNotFound is error code 20 (ResourceNotFound).
	ErrResourceNotFound ErrorCode = 20
	// ErrCannotCloseWebSocketConnection is error code 21 (CannotCloseWebSocketConnection).
	ErrCannotCloseWebSocketConnection ErrorCode = 21
	// ErrStaleClient is error code 30 (StaleClient).
	ErrStaleClient ErrorCode = 30
	// ErrTcpError is error code 31 (TcpError).
	ErrTcpError ErrorCode = 31
	// ErrQuicError is error code 32 (QuicError).
	ErrQuicError ErrorCode = 32
	// ErrInvalidServerAddress is error code 33 (InvalidServerAddress).
	ErrInvalidServerAddress ErrorCode = 33
	// ErrInvalidClientAddress is error code 34 (InvalidClientAddress).
	ErrInvalidClientAddress ErrorCode = 34
	// ErrInvalidIpAddress is error code 35 (InvalidIpAddress).
	ErrInvalidIpAddress ErrorCode = 35
	// ErrHttpError is error code 36 (HttpError).
	ErrHttpError ErrorCode = 36
	// ErrInvalidApiUrl is error code 37 (InvalidApiUrl).
	ErrInvalidApiUrl ErrorCode = 37
	// ErrUnauthenticated is error code 40 (Unauthenticated).
	ErrUnauthenticated ErrorCode = 40
	// ErrUnauthorized is error code 41 (Unauthorized).
	ErrUnauthorized ErrorCode = 41
	// ErrInvalidCredentials is error code 42 (InvalidCredentials).
	ErrInvalidCredentials ErrorCode = 42
	// ErrInvalidUsername is error code 43 (InvalidUsername).
	ErrInvalidUsername ErrorCode = 43
	// ErrInvalidPassword is error code 44 (InvalidPassword).
	ErrInvalidPassword ErrorCode = 44
	// ErrInvalidUserStatus is error code 45 (InvalidUserStatus).
	ErrInvalidUserStatus ErrorCode = 45
	// ErrUserAlreadyExists is error code 46 (UserAlreadyExists).
	ErrUserAlreadyExists ErrorCode = 46
	// ErrUserInactive is error code 47 (UserInactive).
	ErrUserInactive ErrorCode = 47
	// ErrCannotDeleteUser is error code 48 (CannotDeleteUser).
	ErrCannotDeleteUser ErrorCode = 48
	// ErrCannotChangePermissions is error code 49 (CannotChangePermissions).
	ErrCannotChangePermissions ErrorCode = 49
	// ErrInvalidPersonalAccessTokenName is error code 50 (InvalidPersonalAccessTokenName).
	ErrInvalidPersonalAccessTokenName ErrorCode = 50
	// ErrPersonalAccessTokenAlreadyExists is error code 51 (PersonalAccessTokenAlreadyExists).
	ErrPersonalAccessTokenAlreadyExists ErrorCode = 51
	// ErrPersonalAccessTokensLimitReached is error code 52 (PersonalAccessTokensLimitReached).
	ErrPersonalAccessTokensLimitReached ErrorCode = 52
	// ErrInvalidPersonalAccessToken is error code 53 (InvalidPersonalAccessToken).
	ErrInvalidPersonalAccessToken ErrorCode = 53
	// ErrPersonalAccessTokenExpired is error code 54 (PersonalAccessTokenExpired).
	ErrPersonalAccessTokenExpired ErrorCode = 54
	// ErrUsersLimitReached is error code 55 (UsersLimitReached).
	ErrUsersLimitReached ErrorCode = 55
	// ErrInvalidPersonalAccessTokenExpiry is error code 56 (InvalidPersonalAccessTokenExpiry).
	ErrInvalidPersonalAccessTokenExpiry ErrorCode = 56
	// ErrTransientNotCommitted is error code 57 (TransientNotCommitted).
	ErrTransientNotCommitted ErrorCode = 57
	// ErrTransientNotAccepted is error code 58 (TransientNotAccepted).
	ErrTransientNotAccepted ErrorCode = 58
	// ErrRequestAlreadyApplied is error code 59 (RequestAlreadyApplied).
	ErrRequestAlreadyApplied ErrorCode = 59
	// ErrNotConnected is error code 61 (NotConnected).
	ErrNotConnected ErrorCode = 61
	// ErrClientShutdown is error code 63 (ClientShutdown).
	ErrClientShutdown ErrorCode = 63
	// ErrInvalidTlsDomain is error code 64 (InvalidTlsDomain).
	ErrInvalidTlsDomain ErrorCode = 64
	// ErrInvalidTlsCertificatePath is error code 65 (InvalidTlsCertificatePath).
	ErrInvalidTlsCertificatePath ErrorCode = 65
	// ErrInvalidTlsCertificate is error code 66 (InvalidTlsCertificate).
	ErrInvalidTlsCertificate ErrorCode = 66
	// ErrFailedToAddCertificate is error code 67 (FailedToAddCertificate).
	ErrFailedToAddCertificate ErrorCode = 67
	// ErrInvalidEncryptionKey is error code 70 (InvalidEncryptionKey).
	ErrInvalidEncryptionKey ErrorCode = 70
	// ErrCannotEncryptData is error code 71 (CannotEncryptData).
	ErrCannotEncryptData ErrorCode = 71
	// ErrCannotDecryptData is error code 72 (CannotDecryptData).
	ErrCannotDecryptData ErrorCode = 72
	// ErrInvalidJwtAlgorithm is error code 73 (InvalidJwtAlgorithm).
	ErrInvalidJwtAlgorithm ErrorCode = 73
	// ErrInvalidJwtSecret is error code 74 (InvalidJwtSecret).
	ErrInvalidJwtSecret ErrorCode = 74
	// ErrJwtMissing is error code 75 (JwtMissing).
	ErrJwtMissing ErrorCode = 75
	// ErrCannotGenerateJwt is error code 76 (CannotGenerateJwt).
	ErrCannotGenerateJwt ErrorCode = 76
	// ErrAccessTokenMissing is error code 77 (AccessTokenMissing).
	ErrAccessTokenMissing ErrorCode = 77
	// ErrInvalidAccessToken is error code 78 (InvalidAccessToken).
	ErrInvalidAccessToken ErrorCode = 78
	// ErrCannotFetchJwks is error code 79 (CannotFetchJwks).
	ErrCannotFetchJwks ErrorCode = 79
	// ErrInvalidSizeBytes is error code 80 (InvalidSizeBytes).
	ErrInvalidSizeBytes ErrorCode = 80
	// ErrInvalidUtf8 is error code 81 (InvalidUtf8).
	ErrInvalidUtf8 ErrorCode = 81
	// ErrInvalidNumberEncoding is error code 82 (InvalidNumberEncoding).
	ErrInvalidNumberEncoding ErrorCode = 82
	// ErrInvalidBooleanValue is error code 83 (InvalidBooleanValue).
	ErrInvalidBooleanValue ErrorCode = 83
	// ErrInvalidNumberValue is error code 84 (InvalidNumberValue).
	ErrInvalidNumberValue ErrorCode = 84
	// ErrClientNotFound is error code 100 (ClientNotFound).
	ErrClientNotFound ErrorCode = 100
	// ErrInvalidClientId is error code 101 (InvalidClientId).
	ErrInvalidClientId ErrorCode = 101
	// ErrConnectionClosed is error code 206 (ConnectionClosed).
	ErrConnectionClosed ErrorCode = 206
	// ErrCannotParseHeaderKind is error code 209 (CannotParseHeaderKind).
	ErrCannotParseHeaderKind ErrorCode = 209
	// ErrHttpResponseError is error code 300 (HttpResponseError).
	ErrHttpResponseError ErrorCode = 300
	// ErrInvalidHttpRequest is error code 301 (InvalidHttpRequest).
	ErrInvalidHttpRequest ErrorCode = 301
	// ErrInvalidJsonResponse is error code 302 (InvalidJsonResponse).
	ErrInvalidJsonResponse ErrorCode = 302
	// ErrInvalidBytesResponse is error code 303 (InvalidBytesResponse).
	ErrInvalidBytesResponse ErrorCode = 303
	// ErrEmptyResponse is error code 304 (EmptyResponse).
	ErrEmptyResponse ErrorCode = 304
	// ErrCannotCreateEndpoint is error code 305 (CannotCreateEndpoint).
	ErrCannotCreateEndpoint ErrorCode = 305
	// ErrCannotParseUrl is error code 306 (CannotParseUrl).
	ErrCannotParseUrl ErrorCode = 306
	// ErrWebSocketError is error code 400 (WebSocketError).
	ErrWebSocketError ErrorCode = 400
	// ErrWebSocketConnectionError is error code 401 (WebSocketConnectionError).
	ErrWebSocketConnectionError ErrorCode = 401
	// ErrWebSocketCloseError is error code 402 (WebSocketCloseError).
	ErrWebSocketCloseError ErrorCode = 402
	// ErrWebSocketReceiveError is error code 403 (WebSocketReceiveError).
	ErrWebSocketReceiveError ErrorCode = 403
	// ErrWebSocketSendError is error code 404 (WebSocketSendError).
	ErrWebSocketSendError ErrorCode = 404
	// ErrCannotCreateStreamsDirectory is error code 1000 (CannotCreateStreamsDirectory).
	ErrCannotCreateStreamsDirectory ErrorCode = 1000
	// ErrCannotCreateStreamDirectory is error code 1001 (CannotCreateStreamDirectory).
	ErrCannotCreateStreamDirectory ErrorCode = 1001
	// ErrCannotCreateStreamInfo is error code 1002 (CannotCreateStreamInfo).
	ErrCannotCreateStreamInfo ErrorCode = 1002
	// ErrCannotUpdateStreamInfo is error code 1003 (CannotUpdateStreamInfo).
	ErrCannotUpdateStreamInfo ErrorCode = 1003
	// ErrCannotOpenStreamInfo is error code 1004 (CannotOpenStreamInfo).
	ErrCannotOpenStreamInfo ErrorCode = 1004
	// ErrCannotReadStreamInfo is error code 1005 (CannotReadStreamInfo).
	ErrCannotReadStreamInfo ErrorCode = 1005
	// ErrCannotCreateStream is error code 1006 (CannotCreateStream).
	ErrCannotCreateStream ErrorCode = 1006
	// ErrCannotDeleteStream is error code 1007 (CannotDeleteStream).
	ErrCannotDeleteStream ErrorCode = 1007
	// ErrCannotDeleteStreamDirectory is error code 1008 (CannotDeleteStreamDirectory).
	ErrCannotDeleteStreamDirectory ErrorCode = 1008
	// ErrStreamIdNotFound is error code 1009 (StreamIdNotFound).
	ErrStreamIdNotFound ErrorCode = 1009
	// ErrStreamNameNotFound is error code 1010 (StreamNameNotFound).
	ErrStreamNameNotFound ErrorCode = 1010
	// ErrStreamDirectoryNotFound is error code 1011 (StreamDirectoryNotFound).
	ErrStreamDirectoryNotFound ErrorCode = 1011
	// ErrStreamNameAlreadyExists is error code 1012 (StreamNameAlreadyExists).
	ErrStreamNameAlreadyExists ErrorCode = 1012
	// ErrInvalidStreamName is error code 1013 (InvalidStreamName).
	ErrInvalidStreamName ErrorCode = 1013
	// ErrInvalidStreamId is error code 1014 (InvalidStreamId).
	ErrInvalidStreamId ErrorCode = 1014
	// ErrCannotReadStreams is error code 1015 (CannotReadStreams).
	ErrCannotReadStreams ErrorCode = 1015
	// ErrInvalidTopicSize is error code 1019 (InvalidTopicSize).
	ErrInvalidTopicSize ErrorCode = 1019
	// ErrTooManyStreams is error code 1020 (TooManyStreams).
	ErrTooManyStreams ErrorCode = 1020
	// ErrCannotCreateTopicsDirectory is error code 2000 (CannotCreateTopicsDirectory).
	ErrCannotCreateTopicsDirectory ErrorCode = 2000
	// ErrCannotCreateTopicDirectory is error code 2001 (CannotCreateTopicDirectory).
	ErrCannotCreateTopicDirectory ErrorCode = 2001
	// ErrCannotCreateTopicInfo is error code 2002 (CannotCreateTopicInfo).
	ErrCannotCreateTopicInfo ErrorCode = 2002
	// ErrCannotUpdateTopicInfo is error code 2003 (CannotUpdateTopicInfo).
	ErrCannotUpdateTopicInfo ErrorCode = 2003
	// ErrCannotOpenTopicInfo is error code 2004 (CannotOpenTopicInfo).
	ErrCannotOpenTopicInfo ErrorCode = 2004
	// ErrCannotReadTopicInfo is error code 2005 (CannotReadTopicInfo).
	ErrCannotReadTopicInfo ErrorCode = 2005
	// ErrCannotCreateTopic is error code 2006 (CannotCreateTopic).
	ErrCannotCreateTopic ErrorCode = 2006
	// ErrCannotDeleteTopic is error code 2007 (CannotDeleteTopic).
	ErrCannotDeleteTopic ErrorCode = 2007
	// ErrCannotDeleteTopicDirectory is error code 2008 (CannotDeleteTopicDirectory).
	ErrCannotDeleteTopicDirectory ErrorCode = 2008
	// ErrCannotPollTopic is error code 2009 (CannotPollTopic).
	ErrCannotPollTopic ErrorCode = 2009
	// ErrTopicIdNotFound is error code 2010 (TopicIdNotFound).
	ErrTopicIdNotFound ErrorCode = 2010
	// ErrTopicNameNotFound is error code 2011 (TopicNameNotFound).
	ErrTopicNameNotFound ErrorCode = 2011
	// ErrTopicNameAlreadyExists is error code 2013 (TopicNameAlreadyExists).
	ErrTopicNameAlreadyExists ErrorCode = 2013
	// ErrInvalidTopicName is error code 2014 (InvalidTopicName).
	ErrInvalidTopicName ErrorCode = 2014
	// ErrTooManyPartitions is error code 2015 (TooManyPartitions).
	ErrTooManyPartitions ErrorCode = 2015
	// ErrInvalidTopicId is error code 2016 (InvalidTopicId).
	ErrInvalidTopicId ErrorCode = 2016
	// ErrCannotReadTopics is error code 2017 (CannotReadTopics).
	ErrCannotReadTopics ErrorCode = 2017
	// ErrInvalidReplicationFactor is error code 2018 (InvalidReplicationFactor).
	ErrInvalidReplicationFactor ErrorCode = 2018
	// ErrInvalidPartitionsCount is error code 2019 (InvalidPartitionsCount).
	ErrInvalidPartitionsCount ErrorCode = 2019
	// ErrTopicDirectoryNotFound is error code 2020 (TopicDirectoryNotFound).
	ErrTopicDirectoryNotFound ErrorCode = 2020
	// ErrTooManyTopics is error code 2021 (TooManyTopics).
	ErrTooManyTopics ErrorCode = 2021
	// ErrCannotCreatePartition is error code 3000 (CannotCreatePartition).
	ErrCannotCreatePartition ErrorCode = 3000
	// ErrCannotCreatePartitionsDirectory is error code 3001 (CannotCreatePartitionsDirectory).
	ErrCannotCreatePartitionsDirectory ErrorCode = 3001
	// ErrCannotCreatePartitionDirectory is error code 3002 (CannotCreatePartitionDirectory).
	ErrCannotCreatePartitionDirectory ErrorCode = 3002
	// ErrCannotOpenPartitionLogFile is error code 3003 (CannotOpenPartitionLogFile).
	ErrCannotOpenPartitionLogFile ErrorCode = 3003
	// ErrCannotReadPartitions is error code 3004 (CannotReadPartitions).
	ErrCannotReadPartitions ErrorCode = 3004
	// ErrCannotDeletePartition is error code 3005 (CannotDeletePartition).
	ErrCannotDeletePartition ErrorCode = 3005
	// ErrCannotDeletePartitionDirectory is error code 3006 (CannotDeletePartitionDirectory).
	ErrCannotDeletePartitionDirectory ErrorCode = 3006
	// ErrPartitionNotFound is error code 3007 (PartitionNotFound).
	ErrPartitionNotFound ErrorCode = 3007
	// ErrNoPartitions is error code 3008 (NoPartitions).
	ErrNoPartitions ErrorCode = 3008
	// ErrTopicFull is error code 3009 (TopicFull).
	ErrTopicFull ErrorCode = 3009
	// ErrCannotDeleteConsumerOffsetsDirectory is error code 3010 (CannotDeleteConsumerOffsetsDirectory).
	ErrCannotDeleteConsumerOffsetsDirectory ErrorCode = 3010
	// ErrCannotDeleteConsumerOffsetFile is error code 3011 (CannotDeleteConsumerOffsetFile).
	ErrCannotDeleteConsumerOffsetFile ErrorCode = 3011
	// ErrCannotCreateConsumerOffsetsDirectory is error code 3012 (CannotCreateConsumerOffsetsDirectory).
	ErrCannotCreateConsumerOffsetsDirectory ErrorCode = 3012
	// ErrPartitionIdSpaceExhausted is error code 3013 (PartitionIdSpaceExhausted).
	ErrPartitionIdSpaceExhausted ErrorCode = 3013
	// ErrCannotReadConsumerOffsets is error code 3020 (CannotReadConsumerOffsets).
	ErrCannotReadConsumerOffsets ErrorCode = 3020
	// ErrConsumerOffsetNotFound is error code 3021 (ConsumerOffsetNotFound).
	ErrConsumerOffsetNotFound ErrorCode = 3021
	// ErrNotResolvedConsumer is error code 3022 (NotResolvedConsumer).
	ErrNotResolvedConsumer ErrorCode = 3022
	// ErrCannotOpenConsumerOffsetsFile is error code 3023 (CannotOpenConsumerOffsetsFile).
	ErrCannotOpenConsumerOffsetsFile ErrorCode = 3023
	// ErrSegmentNotFound is error code 4000 (SegmentNotFound).
	ErrSegmentNotFound ErrorCode = 4000
	// ErrSegmentClosed is error code 4001 (SegmentClosed).
	ErrSegmentClosed ErrorCode = 4001
	// ErrInvalidSegmentSize is error code 4002 (InvalidSegmentSize).
	ErrInvalidSegmentSize ErrorCode = 4002
	// ErrCannotCreateSegmentLogFile is error code 4003 (CannotCreateSegmentLogFile).
	ErrCannotCreateSegmentLogFile ErrorCode = 4003
	// ErrCannotCreateSegmentIndexFile is error code 4004 (CannotCreateSegmentIndexFile).
	ErrCannotCreateSegmentIndexFile ErrorCode = 4004
	// ErrCannotCreateSegmentTimeIndexFile is error code 4005 (CannotCreateSegmentTimeIndexFile).
	ErrCannotCreateSegmentTimeIndexFile ErrorCode = 4005
	// ErrCannotSaveMessagesToSegment is error code 4006 (CannotSaveMessagesToSegment).
	ErrCannotSaveMessagesToSegment ErrorCode = 4006
	// ErrCannotSaveIndexToSegment is error code 4007 (CannotSaveIndexToSegment).
	ErrCannotSaveIndexToSegment ErrorCode = 4007
	// ErrCannotSaveTimeIndexToSegment is error code 4008 (CannotSaveTimeIndexToSegment).
	ErrCannotSaveTimeIndexToSegment ErrorCode = 4008
	// ErrInvalidMessagesCount is error code 4009 (InvalidMessagesCount).
	ErrInvalidMessagesCount ErrorCode = 4009
	// ErrCannotAppendMessage is error code 4010 (CannotAppendMessage).
	ErrCannotAppendMessage ErrorCode = 4010
	// ErrCannotReadMessage is error code 4011 (CannotReadMessage).
	ErrCannotReadMessage ErrorCode = 4011
	// ErrCannotReadMessageId is error code 4012 (CannotReadMessageId).
	ErrCannotReadMessageId ErrorCode = 4012
	// ErrCannotReadMessageState is error code 4013 (CannotReadMessageState).
	ErrCannotReadMessageState ErrorCode = 4013
	// ErrCannotReadMessageTimestamp is error code 4014 (CannotReadMessageTimestamp).
	ErrCannotReadMessageTimestamp ErrorCode = 4014
	// ErrCannotReadHeadersLength is error code 4015 (CannotReadHeadersLength).
	ErrCannotReadHeadersLength ErrorCode = 4015
	// ErrCannotReadHeadersPayload is error code 4016 (CannotReadHeadersPayload).
	ErrCannotReadHeadersPayload ErrorCode = 4016
	// ErrTooBigUserHeaders is error code 4017 (TooBigUserHeaders).
	ErrTooBigUserHeaders ErrorCode = 4017
	// ErrInvalidHeaderKey is error code 4018 (InvalidHeaderKey).
	ErrInvalidHeaderKey ErrorCode = 4018
	// ErrInvalidHeaderValue is error code 4019 (InvalidHeaderValue).
	ErrInvalidHeaderValue ErrorCode = 4019
	// ErrCannotReadMessageLength is error code 4020 (CannotReadMessageLength).
	ErrCannotReadMessageLength ErrorCode = 4020
	// ErrCannotReadMessagePayload is error code 4021 (CannotReadMessagePayload).
	ErrCannotReadMessagePayload ErrorCode = 4021
	// ErrTooBigMessagePayload is error code 4022 (TooBigMessagePayload).
	ErrTooBigMessagePayload ErrorCode = 4022
	// ErrTooManyMessages is error code 4023 (TooManyMessages).
	ErrTooManyMessages ErrorCode = 4023
	// ErrEmptyMessagePayload is error code 4024 (EmptyMessagePayload).
	ErrEmptyMessagePayload ErrorCode = 4024
	// ErrInvalidMessagePayloadLength is error code 4025 (InvalidMessagePayloadLength).
	ErrInvalidMessagePayloadLength ErrorCode = 4025
	// ErrCannotReadMessageChecksum is error code 4026 (CannotReadMessageChecksum).
	ErrCannotReadMessageChecksum ErrorCode = 4026
	// ErrInvalidMessageChecksum is error code 4027 (InvalidMessageChecksum).
	ErrInvalidMessageChecksum ErrorCode = 4027
	// ErrInvalidKeyValueLength is error code 4028 (InvalidKeyValueLength).
	ErrInvalidKeyValueLength ErrorCode = 4028
	// ErrCommandLengthError is error code 4029 (CommandLengthError).
	ErrCommandLengthError ErrorCode = 4029
	// ErrInvalidSegmentsCount is error code 4030 (InvalidSegmentsCount).
	ErrInvalidSegmentsCount ErrorCode = 4030
	// ErrNonZeroOffset is error code 4031 (NonZeroOffset).
	ErrNonZeroOffset ErrorCode = 4031
	// ErrNonZeroTimestamp is error code 4032 (NonZeroTimestamp).
	ErrNonZeroTimestamp ErrorCode = 4032
	// ErrMissingIndex is error code 4033 (MissingIndex).
	ErrMissingIndex ErrorCode = 4033
	// ErrInvalidIndexesByteSize is error code 4034 (InvalidIndexesByteSize).
	ErrInvalidIndexesByteSize ErrorCode = 4034
	// ErrInvalidIndexesCount is error code 4035 (InvalidIndexesCount).
	ErrInvalidIndexesCount ErrorCode = 4035
	// ErrInvalidMessagesSize is error code 4036 (InvalidMessagesSize).
	ErrInvalidMessagesSize ErrorCode = 4036
	// ErrTooSmallMessage is error code 4037 (TooSmallMessage).
	ErrTooSmallMessage ErrorCode = 4037
	// ErrInvalidMessageTimestampDelta is error code 4038 (InvalidMessageTimestampDelta).
	ErrInvalidMessageTimestampDelta ErrorCode = 4038
	// ErrInvalidBatchChecksum is error code 4039 (InvalidBatchChecksum).
	ErrInvalidBatchChecksum ErrorCode = 4039
	// ErrInvalidHeaderKind is error code 4040 (InvalidHeaderKind).
	ErrInvalidHeaderKind ErrorCode = 4040
	// ErrUnsupportedOptionKey is error code 4041 (UnsupportedOptionKey).
	ErrUnsupportedOptionKey ErrorCode = 4041
	// ErrInvalidOptionValue is error code 4042 (InvalidOptionValue).
	ErrInvalidOptionValue ErrorCode = 4042
	// ErrOptionsBlockTooLarge is error code 4043 (OptionsBlockTooLarge).
	ErrOptionsBlockTooLarge ErrorCode = 4043
	// ErrCannotSendMessagesDueToClientDisconnection is error code 4050 (CannotSendMessagesDueToClientDisconnection).
	ErrCannotSendMessagesDueToClientDisconnection ErrorCode = 4050
	// ErrBackgroundSendError is error code 4051 (BackgroundSendError).
	ErrBackgroundSendError ErrorCode = 4051
	// ErrBackgroundSendTimeout is error code 4052 (BackgroundSendTimeout).
	ErrBackgroundSendTimeout ErrorCode = 4052
	// ErrBackgroundSendBufferFull is error code 4053 (BackgroundSendBufferFull).
	ErrBackgroundSendBufferFull ErrorCode = 4053
	// ErrBackgroundWorkerDisconnected is error code 4054 (BackgroundWorkerDisconnected).
	ErrBackgroundWorkerDisconnected ErrorCode = 4054
	// ErrBackgroundSendBufferOverflow is error code 4055 (BackgroundSendBufferOverflow).
	ErrBackgroundSendBufferOverflow ErrorCode = 4055
	// ErrProducerSendFailed is error code 4056 (ProducerSendFailed).
	ErrProducerSendFailed ErrorCode = 4056
	// ErrProducerClosed is error code 4057 (ProducerClosed).
	ErrProducerClosed ErrorCode = 4057
	// ErrInvalidOffset is error code 4100 (InvalidOffset).
	ErrInvalidOffset ErrorCode = 4100
	// ErrInvalidReservedField is error code 4101 (InvalidReservedField).
	ErrInvalidReservedField ErrorCode = 4101
	// ErrConsumerGroupIdNotFound is error code 5000 (ConsumerGroupIdNotFound).
	ErrConsumerGroupIdNotFound ErrorCode = 5000
	// ErrInvalidConsumerGroupId is error code 5002 (InvalidConsumerGroupId).
	ErrInvalidConsumerGroupId ErrorCode = 5002
	// ErrConsumerGroupNameNotFound is error code 5003 (ConsumerGroupNameNotFound).
	ErrConsumerGroupNameNotFound ErrorCode = 5003
	// ErrConsumerGroupNameAlreadyExists is error code 5004 (ConsumerGroupNameAlreadyExists).
	ErrConsumerGroupNameAlreadyExists ErrorCode = 5004
	// ErrInvalidConsumerGroupName is error code 5005 (InvalidConsumerGroupName).
	ErrInvalidConsumerGroupName ErrorCode = 5005
	// ErrConsumerGroupMemberNotFound is error code 5006 (ConsumerGroupMemberNotFound).
	ErrConsumerGroupMemberNotFound ErrorCode = 5006
	// ErrCannotCreateConsumerGroupInfo is error code 5007 (CannotCreateConsumerGroupInfo).
	ErrCannotCreateConsumerGroupInfo ErrorCode = 5007
	// ErrCannotDeleteConsumerGroupInfo is error code 5008 (CannotDeleteConsumerGroupInfo).
	ErrCannotDeleteConsumerGroupInfo ErrorCode = 5008
	// ErrConsumerGroupPartitionNotOwned is error code 5009 (ConsumerGroupPartitionNotOwned).
	ErrConsumerGroupPartitionNotOwned ErrorCode = 5009
	// ErrMissingBaseOffsetRetainedMessageBatch is error code 6000 (MissingBaseOffsetRetainedMessageBatch).
	ErrMissingBaseOffsetRetainedMessageBatch ErrorCode = 6000
	// ErrMissingLastOffsetDeltaRetainedMessageBatch is error code 6001 (MissingLastOffsetDeltaRetainedMessageBatch).
	ErrMissingLastOffsetDeltaRetainedMessageBatch ErrorCode = 6001
	// ErrMissingMaxTimestampRetainedMessageBatch is error code 6002 (MissingMaxTimestampRetainedMessageBatch).
	ErrMissingMaxTimestampRetainedMessageBatch ErrorCode = 6002
	// ErrMissingLengthRetainedMessageBatch is error code 6003 (MissingLengthRetainedMessageBatch).
	ErrMissingLengthRetainedMessageBatch ErrorCode = 6003
	// ErrMissingPayloadRetainedMessageBatch is error code 6004 (MissingPayloadRetainedMessageBatch).
	ErrMissingPayloadRetainedMessageBatch ErrorCode = 6004
	// ErrCannotReadBatchBaseOffset is error code 7000 (CannotReadBatchBaseOffset).
	ErrCannotReadBatchBaseOffset ErrorCode = 7000
	// ErrCannotReadBatchLength is error code 7001 (CannotReadBatchLength).
	ErrCannotReadBatchLength ErrorCode = 7001
	// ErrCannotReadLastOffsetDelta is error code 7002 (CannotReadLastOffsetDelta).
	ErrCannotReadLastOffsetDelta ErrorCode = 7002
	// ErrCannotReadMaxTimestamp is error code 7003 (CannotReadMaxTimestamp).
	ErrCannotReadMaxTimestamp ErrorCode = 7003
	// ErrCannotReadBatchPayload is error code 7004 (CannotReadBatchPayload).
	ErrCannotReadBatchPayload ErrorCode = 7004
	// ErrInvalidConnectionString is error code 8000 (InvalidConnectionString).
	ErrInvalidConnectionString ErrorCode = 8000
	// ErrSnapshotFileCompletionFailed is error code 9000 (SnapshotFileCompletionFailed).
	ErrSnapshotFileCompletionFailed ErrorCode = 9000
	// ErrCannotSerializeResource is error code 10000 (CannotSerializeResource).
	ErrCannotSerializeResource ErrorCode = 10000
	// ErrCannotDeserializeResource is error code 10001 (CannotDeserializeResource).
	ErrCannotDeserializeResource ErrorCode = 10001
	// ErrCannotReadFile is error code 10002 (CannotReadFile).
	ErrCannotReadFile ErrorCode = 10002
	// ErrCannotReadFileMetadata is error code 10003 (CannotReadFileMetadata).
	ErrCannotReadFileMetadata ErrorCode = 10003
	// ErrCannotSeekFile is error code 10004 (CannotSeekFile).
	ErrCannotSeekFile ErrorCode = 10004
	// ErrCannotAppendToFile is error code 10005 (CannotAppendToFile).
	ErrCannotAppendToFile ErrorCode = 10005
	// ErrCannotWriteToFile is error code 10006 (CannotWriteToFile).
	ErrCannotWriteToFile ErrorCode = 10006
	// ErrCannotOverwriteFile is error code 10007 (CannotOverwriteFile).
	ErrCannotOverwriteFile ErrorCode = 10007
	// ErrCannotDeleteFile is error code 10008 (CannotDeleteFile).
	ErrCannotDeleteFile ErrorCode = 10008
	// ErrCannotSyncFile is error code 10009 (CannotSyncFile).
	ErrCannotSyncFile ErrorCode = 10009
	// ErrCannotReadIndexOffset is error code 10010 (CannotReadIndexOffset).
	ErrCannotReadIndexOffset ErrorCode = 10010
	// ErrCannotReadIndexPosition is error code 10011 (CannotReadIndexPosition).
	ErrCannotReadIndexPosition ErrorCode = 10011
	// ErrCannotReadIndexTimestamp is error code 10012 (CannotReadIndexTimestamp).
	ErrCannotReadIndexTimestamp ErrorCode = 10012
	// ErrTimestampOutOfRange is error code 10013 (TimestampOutOfRange).
	ErrTimestampOutOfRange ErrorCode = 10013
	// ErrShardNotFound is error code 11000 (ShardNotFound).
	ErrShardNotFound ErrorCode = 11000
	// ErrShardCommunicationError is error code 11001 (ShardCommunicationError).
	ErrShardCommunicationError ErrorCode = 11001
	// ErrCannotBindToSocket is error code 12000 (CannotBindToSocket).
	ErrCannotBindToSocket ErrorCode = 12000
	// ErrTaskTimeout is error code 12001 (TaskTimeout).
	ErrTaskTimeout ErrorCode = 12001
	// ErrIoError is error code 13000 (IoError).
	ErrIoError ErrorCode = 13000
	// ErrAlreadyAuthenticated is error code 14000 (AlreadyAuthenticated).
	ErrAlreadyAuthenticated ErrorCode = 14000
	// ErrInvalidSession is error code 14001 (InvalidSession).
	ErrInvalidSession ErrorCode = 14001
	// ErrIncompatibleProtocolVersion is error code 14003 (IncompatibleProtocolVersion).
	ErrIncompatibleProtocolVersion ErrorCode = 14003
)

// errorCodeNames lists every known code with its §8 name, sorted by code
// for binary search.
var errorCodeNames = [...]errorCodeName{
	{ErrError, "Error"},
	{ErrInvalidConfiguration, "InvalidConfiguration"},
	{ErrInvalidCommand, "InvalidCommand"},
	{ErrInvalidFormat, "InvalidFormat"},
	{ErrFeatureUnavailable, "FeatureUnavailable"},
	{ErrInvalidIdentifier, "InvalidIdentifier"},
	{ErrInvalidVersion, "InvalidVersion"},
	{ErrDisconnected, "Disconnected"},
	{ErrCannotEstablishConnection, "CannotEstablishConnection"},
	{ErrCannotCreateBaseDirectory, "CannotCreateBaseDirectory"},
	{ErrCannotCreateRuntimeDirectory, "CannotCreateRuntimeDirectory"},
	{ErrCannotRemoveRuntimeDirectory, "CannotRemoveRuntimeDirectory"},
	{ErrCannotCreateStateDirectory, "CannotCreateStateDirectory"},
	{ErrStateFileNotFound, "StateFileNotFound"},
	{ErrStateFileCorrupted, "StateFileCorrupted"},
	{ErrInvalidStateEntryChecksum, "InvalidStateEntryChecksum"},
	{ErrCannotOpenDatabase, "CannotOpenDatabase"},
	{ErrResourceNotFound, "ResourceNotFound"},
	{ErrCannotCloseWebSocketConnection, "CannotCloseWebSocketConnection"},
	{ErrStaleClient, "StaleClient"},
	{ErrTcpError, "TcpError"},
	{ErrQuicError, "QuicError"},
	{ErrInvalidServerAddress, "InvalidServerAddress"},
	{ErrInvalidClientAddress, "InvalidClientAddress"},
	{ErrInvalidIpAddress, "InvalidIpAddress"},
	{ErrHttpError, "HttpError"},
	{ErrInvalidApiUrl, "InvalidApiUrl"},
	{ErrUnauthenticated, "Unauthenticated"},
	{ErrUnauthorized, "Unauthorized"},
	{ErrInvalidCredentials, "InvalidCredentials"},
	{ErrInvalidUsername, "InvalidUsername"},
	{ErrInvalidPassword, "InvalidPassword"},
	{ErrInvalidUserStatus, "InvalidUserStatus"},
	{ErrUserAlreadyExists, "UserAlreadyExists"},
	{ErrUserInactive, "UserInactive"},
	{ErrCannotDeleteUser, "CannotDeleteUser"},
	{ErrCannotChangePermissions, "CannotChangePermissions"},
	{ErrInvalidPersonalAccessTokenName, "InvalidPersonalAccessTokenName"},
	{ErrPersonalAccessTokenAlreadyExists, "PersonalAccessTokenAlreadyExists"},
	{ErrPersonalAccessTokensLimitReached, "PersonalAccessTokensLimitReached"},
	{ErrInvalidPersonalAccessToken, "InvalidPersonalAccessToken"},
	{ErrPersonalAccessTokenExpired, "PersonalAccessTokenExpired"},
	{ErrUsersLimitReached, "UsersLimitReached"},
	{ErrInvalidPersonalAccessTokenExpiry, "InvalidPersonalAccessTokenExpiry"},
	{ErrTransientNotCommitted, "TransientNotCommitted"},
	{ErrTransientNotAccepted, "TransientNotAccepted"},
	{ErrRequestAlreadyApplied, "RequestAlreadyApplied"},
	{ErrNotConnected, "NotConnected"},
	{ErrClientShutdown, "ClientShutdown"},
	{ErrInvalidTlsDomain, "InvalidTlsDomain"},
	{ErrInvalidTlsCertificatePath, "InvalidTlsCertificatePath"},
	{ErrInvalidTlsCertificate, "InvalidTlsCertificate"},
	{ErrFailedToAddCertificate, "FailedToAddCertificate"},
	{ErrInvalidEncryptionKey, "InvalidEncryptionKey"},
	{ErrCannotEncryptData, "CannotEncryptData"},
	{ErrCannotDecryptData, "CannotDecryptData"},
	{ErrInvalidJwtAlgorithm, "InvalidJwtAlgorithm"},
	{ErrInvalidJwtSecret, "InvalidJwtSecret"},
	{ErrJwtMissing, "JwtMissing"},
	{ErrCannotGenerateJwt, "CannotGenerateJwt"},
	{ErrAccessTokenMissing, "AccessTokenMissing"},
	{ErrInvalidAccessToken, "InvalidAccessToken"},
	{ErrCannotFetchJwks, "CannotFetchJwks"},
	{ErrInvalidSizeBytes, "InvalidSizeBytes"},
	{ErrInvalidUtf8, "InvalidUtf8"},
	{ErrInvalidNumberEncoding, "InvalidNumberEncoding"},
	{ErrInvalidBooleanValue, "InvalidBooleanValue"},
	{ErrInvalidNumberValue, "InvalidNumberValue"},
	{ErrClientNotFound, "ClientNotFound"},
	{ErrInvalidClientId, "InvalidClientId"},
	{ErrConnectionClosed, "ConnectionClosed"},
	{ErrCannotParseHeaderKind, "CannotParseHeaderKind"},
	{ErrHttpResponseError, "HttpResponseError"},
	{ErrInvalidHttpRequest, "InvalidHttpRequest"},
	{ErrInvalidJsonResponse, "InvalidJsonResponse"},
	{ErrInvalidBytesResponse, "InvalidBytesResponse"},
	{ErrEmptyResponse, "EmptyResponse"},
	{ErrCannotCreateEndpoint, "CannotCreateEndpoint"},
	{ErrCannotParseUrl, "CannotParseUrl"},
	{ErrWebSocketError, "WebSocketError"},
	{ErrWebSocketConnectionError, "WebSocketConnectionError"},
	{ErrWebSocketCloseError, "WebSocketCloseError"},
	{ErrWebSocketReceiveError, "WebSocketReceiveError"},
	{ErrWebSocketSendError, "WebSocketSendError"},
	{ErrCannotCreateStreamsDirectory, "CannotCreateStreamsDirectory"},
	{ErrCannotCreateStreamDirectory, "CannotCreateStreamDirectory"},
	{ErrCannotCreateStreamInfo, "CannotCreateStreamInfo"},
	{ErrCannotUpdateStreamInfo, "CannotUpdateStreamInfo"},
	{ErrCannotOpenStreamInfo, "CannotOpenStreamInfo"},
	{ErrCannotReadStreamInfo, "CannotReadStreamInfo"},
	{ErrCannotCreateStream, "CannotCreateStream"},
	{ErrCannotDeleteStream, "CannotDeleteStream"},
	{ErrCannotDeleteStreamDirectory, "CannotDeleteStreamDirectory"},
	{ErrStreamIdNotFound, "StreamIdNotFound"},
	{ErrStreamNameNotFound, "StreamNameNotFound"},
	{ErrStreamDirectoryNotFound, "StreamDirectoryNotFound"},
	{ErrStreamNameAlreadyExists, "StreamNameAlreadyExists"},
	{ErrInvalidStreamName, "InvalidStreamName"},
	{ErrInvalidStreamId, "InvalidStreamId"},
	{ErrCannotReadStreams, "CannotReadStreams"},
	{ErrInvalidTopicSize, "InvalidTopicSize"},
	{ErrTooManyStreams, "TooManyStreams"},
	{ErrCannotCreateTopicsDirectory, "CannotCreateTopicsDirectory"},
	{ErrCannotCreateTopicDirectory, "CannotCreateTopicDirectory"},
	{ErrCannotCreateTopicInfo, "CannotCreateTopicInfo"},
	{ErrCannotUpdateTopicInfo, "CannotUpdateTopicInfo"},
	{ErrCannotOpenTopicInfo, "CannotOpenTopicInfo"},
	{ErrCannotReadTopicInfo, "CannotReadTopicInfo"},
	{ErrCannotCreateTopic, "CannotCreateTopic"},
	{ErrCannotDeleteTopic, "CannotDeleteTopic"},
	{ErrCannotDeleteTopicDirectory, "CannotDeleteTopicDirectory"},
	{ErrCannotPollTopic, "CannotPollTopic"},
	{ErrTopicIdNotFound, "TopicIdNotFound"},
	{ErrTopicNameNotFound, "TopicNameNotFound"},
	{ErrTopicNameAlreadyExists, "TopicNameAlreadyExists"},
	{ErrInvalidTopicName, "InvalidTopicName"},
	{ErrTooManyPartitions, "TooManyPartitions"},
	{ErrInvalidTopicId, "InvalidTopicId"},
	{ErrCannotReadTopics, "CannotReadTopics"},
	{ErrInvalidReplicationFactor, "InvalidReplicationFactor"},
	{ErrInvalidPartitionsCount, "InvalidPartitionsCount"},
	{ErrTopicDirectoryNotFound, "TopicDirectoryNotFound"},
	{ErrTooManyTopics, "TooManyTopics"},
	{ErrCannotCreatePartition, "CannotCreatePartition"},
	{ErrCannotCreatePartitionsDirectory, "CannotCreatePartitionsDirectory"},
	{ErrCannotCreatePartitionDirectory, "CannotCreatePartitionDirectory"},
	{ErrCannotOpenPartitionLogFile, "CannotOpenPartitionLogFile"},
	{ErrCannotReadPartitions, "CannotReadPartitions"},
	{ErrCannotDeletePartition, "CannotDeletePartition"},
	{ErrCannotDeletePartitionDirectory, "CannotDeletePartitionDirectory"},
	{ErrPartitionNotFound, "PartitionNotFound"},
	{ErrNoPartitions, "NoPartitions"},
	{ErrTopicFull, "TopicFull"},
	{ErrCannotDeleteConsumerOffsetsDirectory, "CannotDeleteConsumerOffsetsDirectory"},
	{ErrCannotDeleteConsumerOffsetFile, "CannotDeleteConsumerOffsetFile"},
	{ErrCannotCreateConsumerOffsetsDirectory, "CannotCreateConsumerOffsetsDirectory"},
	{ErrPartitionIdSpaceExhausted, "PartitionIdSpaceExhausted"},
	{ErrCannotReadConsumerOffsets, "CannotReadConsumerOffsets"},
	{ErrConsumerOffsetNotFound, "ConsumerOffsetNotFound"},
	{ErrNotResolvedConsumer, "NotResolvedConsumer"},
	{ErrCannotOpenConsumerOffsetsFile, "CannotOpenConsumerOffsetsFile"},
	{ErrSegmentNotFound, "SegmentNotFound"},
	{ErrSegmentClosed, "SegmentClosed"},
	{ErrInvalidSegmentSize, "InvalidSegmentSize"},
	{ErrCannotCreateSegmentLogFile, "CannotCreateSegmentLogFile"},
	{ErrCannotCreateSegmentIndexFile, "CannotCreateSegmentIndexFile"},
	{ErrCannotCreateSegmentTimeIndexFile, "CannotCreateSegmentTimeIndexFile"},
	{ErrCannotSaveMessagesToSegment, "CannotSaveMessagesToSegment"},
	{ErrCannotSaveIndexToSegment, "CannotSaveIndexToSegment"},
	{ErrCannotSaveTimeIndexToSegment, "CannotSaveTimeIndexToSegment"},
	{ErrInvalidMessagesCount, "InvalidMessagesCount"},
	{ErrCannotAppendMessage, "CannotAppendMessage"},
	{ErrCannotReadMessage, "CannotReadMessage"},
	{ErrCannotReadMessageId, "CannotReadMessageId"},
	{ErrCannotReadMessageState, "CannotReadMessageState"},
	{ErrCannotReadMessageTimestamp, "CannotReadMessageTimestamp"},
	{ErrCannotReadHeadersLength, "CannotReadHeadersLength"},
	{ErrCannotReadHeadersPayload, "CannotReadHeadersPayload"},
	{ErrTooBigUserHeaders, "TooBigUserHeaders"},
	{ErrInvalidHeaderKey, "InvalidHeaderKey"},
	{ErrInvalidHeaderValue, "InvalidHeaderValue"},
	{ErrCannotReadMessageLength, "CannotReadMessageLength"},
	{ErrCannotReadMessagePayload, "CannotReadMessagePayload"},
	{ErrTooBigMessagePayload, "TooBigMessagePayload"},
	{ErrTooManyMessages, "TooManyMessages"},
	{ErrEmptyMessagePayload, "EmptyMessagePayload"},
	{ErrInvalidMessagePayloadLength, "InvalidMessagePayloadLength"},
	{ErrCannotReadMessageChecksum, "CannotReadMessageChecksum"},
	{ErrInvalidMessageChecksum, "InvalidMessageChecksum"},
	{ErrInvalidKeyValueLength, "InvalidKeyValueLength"},
	{ErrCommandLengthError, "CommandLengthError"},
	{ErrInvalidSegmentsCount, "InvalidSegmentsCount"},
	{ErrNonZeroOffset, "NonZeroOffset"},
	{ErrNonZeroTimestamp, "NonZeroTimestamp"},
	{ErrMissingIndex, "MissingIndex"},
	{ErrInvalidIndexesByteSize, "InvalidIndexesByteSize"},
	{ErrInvalidIndexesCount, "InvalidIndexesCount"},
	{ErrInvalidMessagesSize, "InvalidMessagesSize"},
	{ErrTooSmallMessage, "TooSmallMessage"},
	{ErrInvalidMessageTimestampDelta, "InvalidMessageTimestampDelta"},
	{ErrInvalidBatchChecksum, "InvalidBatchChecksum"},
	{ErrInvalidHeaderKind, "InvalidHeaderKind"},
	{ErrUnsupportedOptionKey, "UnsupportedOptionKey"},
	{ErrInvalidOptionValue, "InvalidOptionValue"},
	{ErrOptionsBlockTooLarge, "OptionsBlockTooLarge"},
	{ErrCannotSendMessagesDueToClientDisconnection, "CannotSendMessagesDueToClientDisconnection"},
	{ErrBackgroundSendError, "BackgroundSendError"},
	{ErrBackgroundSendTimeout, "BackgroundSendTimeout"},
	{ErrBackgroundSendBufferFull, "BackgroundSendBufferFull"},
	{ErrBackgroundWorkerDisconnected, "BackgroundWorkerDisconnected"},
	{ErrBackgroundSendBufferOverflow, "BackgroundSendBufferOverflow"},
	{ErrProducerSendFailed, "ProducerSendFailed"},
	{ErrProducerClosed, "ProducerClosed"},
	{ErrInvalidOffset, "InvalidOffset"},
	{ErrInvalidReservedField, "InvalidReservedField"},
	{ErrConsumerGroupIdNotFound, "ConsumerGroupIdNotFound"},
	{ErrInvalidConsumerGroupId, "InvalidConsumerGroupId"},
	{ErrConsumerGroupNameNotFound, "ConsumerGroupNameNotFound"},
	{ErrConsumerGroupNameAlreadyExists, "ConsumerGroupNameAlreadyExists"},
	{ErrInvalidConsumerGroupName, "InvalidConsumerGroupName"},
	{ErrConsumerGroupMemberNotFound, "ConsumerGroupMemberNotFound"},
	{ErrCannotCreateConsumerGroupInfo, "CannotCreateConsumerGroupInfo"},
	{ErrCannotDeleteConsumerGroupInfo, "CannotDeleteConsumerGroupInfo"},
	{ErrConsumerGroupPartitionNotOwned, "ConsumerGroupPartitionNotOwned"},
	{ErrMissingBaseOffsetRetainedMessageBatch, "MissingBaseOffsetRetainedMessageBatch"},
	{ErrMissingLastOffsetDeltaRetainedMessageBatch, "MissingLastOffsetDeltaRetainedMessageBatch"},
	{ErrMissingMaxTimestampRetainedMessageBatch, "MissingMaxTimestampRetainedMessageBatch"},
	{ErrMissingLengthRetainedMessageBatch, "MissingLengthRetainedMessageBatch"},
	{ErrMissingPayloadRetainedMessageBatch, "MissingPayloadRetainedMessageBatch"},
	{ErrCannotReadBatchBaseOffset, "CannotReadBatchBaseOffset"},
	{ErrCannotReadBatchLength, "CannotReadBatchLength"},
	{ErrCannotReadLastOffsetDelta, "CannotReadLastOffsetDelta"},
	{ErrCannotReadMaxTimestamp, "CannotReadMaxTimestamp"},
	{ErrCannotReadBatchPayload, "CannotReadBatchPayload"},
	{ErrInvalidConnectionString, "InvalidConnectionString"},
	{ErrSnapshotFileCompletionFailed, "SnapshotFileCompletionFailed"},
	{ErrCannotSerializeResource, "CannotSerializeResource"},
	{ErrCannotDeserializeResource, "CannotDeserializeResource"},
	{ErrCannotReadFile, "CannotReadFile"},
	{ErrCannotReadFileMetadata, "CannotReadFileMetadata"},
	{ErrCannotSeekFile, "CannotSeekFile"},
	{ErrCannotAppendToFile, "CannotAppendToFile"},
	{ErrCannotWriteToFile, "CannotWriteToFile"},
	{ErrCannotOverwriteFile, "CannotOverwriteFile"},
	{ErrCannotDeleteFile, "CannotDeleteFile"},
	{ErrCannotSyncFile, "CannotSyncFile"},
	{ErrCannotReadIndexOffset, "CannotReadIndexOffset"},
	{ErrCannotReadIndexPosition, "CannotReadIndexPosition"},
	{ErrCannotReadIndexTimestamp, "CannotReadIndexTimestamp"},
	{ErrTimestampOutOfRange, "TimestampOutOfRange"},
	{ErrShardNotFound, "ShardNotFound"},
	{ErrShardCommunicationError, "ShardCommunicationError"},
	{ErrCannotBindToSocket, "CannotBindToSocket"},
	{ErrTaskTimeout, "TaskTimeout"},
	{ErrIoError, "IoError"},
	{ErrAlreadyAuthenticated, "AlreadyAuthenticated"},
	{ErrInvalidSession, "InvalidSession"},
	{ErrIncompatibleProtocolVersion, "IncompatibleProtocolVersion"},
}
